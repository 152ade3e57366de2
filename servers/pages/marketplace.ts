/**
 * The marketplace pages (issue 14 section 2): `/featured` (the Featured Brand slot, its bid
 * history, how to bid with x402) and `/agenthub` (the storefront: spotlight, featured, top
 * listings, categories, boosted entries marked sponsored). Data from the same operations as
 * `GET {public_api_url}/featured` and `GET {public_api_url}/agenthub`.
 */
import type { Request, Response } from 'express';
import type { Config } from '../config.ts';
import { currentHolder } from '../features/catalog/featured-bid/auction.ts';
import type { FeaturedSlot } from '../features/catalog/featured-bid/operations.ts';
import type { getAgentHub } from '../features/directory/operations.ts';
import { publicUrlProblem } from '../public-address.ts';
import type { Services } from '../services.ts';
import { type Html, html } from './html.ts';
import { type FeaturedBrand, withFeaturedBrand } from './layout.ts';
import { type RenderedPage, sendPage } from './negotiate.ts';

type Hub = Awaited<ReturnType<typeof getAgentHub.handler>>;

const usd = (n: number) => `${n.toFixed(2)} USDC`;
const day = (iso: string) => iso.slice(0, 16).replace('T', ' ');

export function featuredBody(config: Config, slot: FeaturedSlot): { body: Html; markdown: string } {
  const example = JSON.stringify(
    { domain: 'example.com', bid_usdc: slot.minimum_next_bid_usdc, days: 1, blurb: 'Your line in the slot' },
    null,
    2,
  );
  const script = `// npm install @x402/fetch @x402/evm viem
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const client = new x402Client();
registerExactEvmScheme(client, { signer: privateKeyToAccount(process.env.PRIVATE_KEY) });
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay('${slot.bid_url}', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(${example.replace(/\n/g, '\n  ')}),
});
console.log(res.status, await res.json());`;
  const h = slot.holder;
  const body = html`<h1>The Featured Brand slot</h1>
<p>One brand at a time is the Featured Brand, shown in the header of every page of this site and first on <a href="${config.site_url}/agenthub">the agent hub</a>. The highest daily bid holds the slot; an outbid holder is credited back for its unused days. The same data as JSON: <a href="${config.public_api_url}/featured">GET /featured</a>.</p>
<section class="card" aria-labelledby="holder-h">
<h2 id="holder-h">Now</h2>
${
  h
    ? html`<p data-testid="holder"><a href="${h.url}" rel="sponsored"><strong>${h.domain}</strong></a>${h.blurb ? html`: ${h.blurb}` : ''}</p>
<p>${usd(h.bid_usdc)} a day, since ${day(h.since)} UTC, until ${day(h.until)} UTC unless outbid.</p>`
    : html`<p data-testid="holder">The slot is free.</p>`
}
<p>Minimum bid to take the slot now: <strong class="price" data-testid="minimum">${usd(slot.minimum_next_bid_usdc)}</strong> a day (opening bid ${usd(slot.opening_bid_usdc)}, increment ${usd(slot.bid_increment_usdc)}).</p>
</section>
<section aria-labelledby="bid-h">
<h2 id="bid-h">How to bid</h2>
<p>Bids are paid per call with x402 (USDC): <code>POST ${slot.bid_url}</code> with <code>{domain, bid_usdc, days?, url?, blurb?}</code>. Without payment the answer is <code>402</code> with the terms in the <code>PAYMENT-REQUIRED</code> header; send the same request again with the signed payment in <code>PAYMENT-SIGNATURE</code>. A bid that cannot win is refused with <code>409</code> before anything is paid. With <code>@x402/fetch</code>:</p>
<pre><code>${script}</code></pre>
<p>The same SKU is the MCP tool of the public server <code>${config.mcp_url}</code>.</p>
</section>
<section aria-labelledby="history-h">
<h2 id="history-h">Bid history</h2>
${
  slot.history.length === 0
    ? html`<p>No bids yet.</p>`
    : html`<table><thead><tr><th scope="col">Domain</th><th scope="col" class="num">Daily bid</th><th scope="col" class="num">Days</th><th scope="col">Status</th><th scope="col">From</th><th scope="col">Until</th><th scope="col" class="num">Credited back</th></tr></thead><tbody>
${slot.history.map(
  (b) =>
    html`<tr><td>${b.domain}</td><td class="num">${usd(b.bid_usdc)}</td><td class="num">${b.days}</td><td>${b.status}</td><td>${day(b.since)}</td><td>${day(b.until)}</td><td class="num">${usd(b.credited_usdc)}</td></tr>
`,
)}</tbody></table>`
}
</section>`;
  const markdown = `# The Featured Brand slot

Now: ${h ? `${h.domain} (${h.url}), ${usd(h.bid_usdc)} a day until ${h.until}` : 'free'}
Minimum next bid: ${usd(slot.minimum_next_bid_usdc)} a day

## How to bid

\`POST ${slot.bid_url}\` with x402 payment:

\`\`\`js
${script}
\`\`\`

## Bid history

${slot.history.map((b) => `- ${b.domain}: ${usd(b.bid_usdc)} x ${b.days} days, ${b.status}, ${b.since} - ${b.until}`).join('\n')}
`;
  return { body, markdown };
}

export function agentHubBody(config: Config, hub: Hub): { body: Html; markdown: string } {
  const site = config.site_url;
  const placement = (p: { domain: string; url: string | null; blurb: string | null; ends_at: string }) =>
    html`<li class="card">${p.url ? html`<a href="${p.url}" rel="sponsored"><strong>${p.domain}</strong></a>` : html`<strong>${p.domain}</strong>`} <span class="sponsored">Sponsored</span>${p.blurb ? html`<br>${p.blurb}` : ''}<br><span class="muted">Until ${day(p.ends_at)} UTC</span></li>`;
  const body = html`<h1>Agent hub</h1>
<p>The storefront of the directory: ${hub.total_listings} listed sites and ${hub.agents.brand} brand agents. Paid placements are marked sponsored and never change the ranking. The same data as JSON: <a href="${config.public_api_url}/agenthub">GET /agenthub</a>.</p>
<section aria-labelledby="featured-h"><h2 id="featured-h">Featured</h2>
${hub.featured.length ? html`<ul>${hub.featured.map(placement)}</ul>` : html`<p>The featured slot is free: <a href="${site}/featured">bid for it</a>.</p>`}
</section>
<section aria-labelledby="spotlight-h"><h2 id="spotlight-h">Spotlight</h2>
${hub.spotlight.length ? html`<ul>${hub.spotlight.map(placement)}</ul>` : html`<p>No spotlight placement now.</p>`}
</section>
<section aria-labelledby="top-h"><h2 id="top-h">Top listings</h2>
${
  hub.top_listings.length === 0
    ? html`<p>No listing yet. List a site with <code>POST ${config.public_api_url}/listings</code>.</p>`
    : html`<table><thead><tr><th scope="col">Site</th><th scope="col">Category</th><th scope="col" class="num">Signal Strength</th><th scope="col">About</th></tr></thead><tbody>
${hub.top_listings.map(
  (l) =>
    html`<tr><td><a href="${l.url}">${l.name}</a> <span class="muted">${l.domain}</span></td><td>${l.category}</td><td class="num">${l.score === null ? 'not scanned' : html`<a href="${site}/scan/${encodeURIComponent(l.domain)}">${l.score}</a>`}</td><td>${l.description}</td></tr>
`,
)}</tbody></table>`
}
</section>
<section aria-labelledby="categories-h"><h2 id="categories-h">Categories</h2>
<ul>${hub.categories.map((c) => html`<li>${c.category.replace(/_/g, ' ')}: ${c.listings}</li>`)}</ul>
</section>
<section aria-labelledby="boosted-h"><h2 id="boosted-h">Sponsored links</h2>
${
  hub.boosted.length
    ? html`<ul>${hub.boosted.map((b) => html`<li><a href="${b.url}" rel="sponsored">${b.domain}</a> <span class="sponsored">Sponsored</span>${b.note ? html` ${b.note}` : ''}</li>`)}</ul>`
    : html`<p>No boosted entry now.</p>`
}
</section>
<section aria-labelledby="join-h"><h2 id="join-h">How to be listed and placed</h2>
<p>Any site can be listed for free with <code>POST ${config.public_api_url}/listings</code> (name, description, category, URL and a published contact); listings are ranked by their Signal Strength score, so a site that is ready for agents rises on its own. Brands register an agent with <code>POST ${config.public_api_url}/brand-agent</code> to receive return requests from personal agents.</p>
<p>Three paid placements are sold per call with x402 in USDC, and each is marked sponsored wherever it appears: the <a href="${site}/featured">Featured Brand slot</a>, held by the highest daily bid and shown in the header of every page; a 30-day spotlight on this storefront, the leaderboard and the live catalog (<code>POST ${site}/api/public/x402/spotlight</code>); and boost campaigns that place a URL among the sponsored links (<code>POST ${site}/api/public/x402/boost</code>). Paid placements never change a ranking or a score.</p>
</section>`;
  const markdown = `# Agent hub

## Featured

${hub.featured.map((p) => `- ${p.domain} (sponsored)${p.blurb ? `: ${p.blurb}` : ''}`).join('\n') || 'Free.'}

## Spotlight

${hub.spotlight.map((p) => `- ${p.domain} (sponsored)${p.blurb ? `: ${p.blurb}` : ''}`).join('\n') || 'None.'}

## Top listings

${hub.top_listings.map((l) => `- [${l.name}](${l.url}) ${l.category}, score ${l.score ?? 'not scanned'}`).join('\n') || 'None.'}

## Categories

${hub.categories.map((c) => `- ${c.category}: ${c.listings}`).join('\n')}

## Sponsored links

${hub.boosted.map((b) => `- [${b.domain}](${b.url}) (sponsored)`).join('\n') || 'None.'}
`;
  return { body, markdown };
}

/**
 * The Featured Brand as the header shows it: the holder of GET /featured's slot (the auction's
 * own `currentHolder`, the query `featuredSlot` answers with), or null. One indexed read per page.
 */
export async function currentFeaturedBrand(services: Services): Promise<FeaturedBrand | null> {
  const holder = await currentHolder(services.db, services.now().toISOString());
  // The public-address rule holds for what every page links to, slots bought before it included.
  if (!holder || publicUrlProblem(holder.url, services.domainPolicy)) return null;
  return { domain: holder.domain, url: holder.url, blurb: holder.blurb };
}

/** Sends a page with the current Featured Brand in its header. */
export async function sendWithFeaturedBrand(
  services: Services,
  req: Request,
  res: Response,
  page: RenderedPage,
): Promise<void> {
  const brand = await currentFeaturedBrand(services);
  sendPage(req, res, { ...page, html: withFeaturedBrand(page.html, services.config, brand) });
}
