/**
 * The one layout and stylesheet of the site's pages (issue 14 section 2): a header with the
 * navigation (and the Featured Brand once one exists), the page's main content, a footer. The
 * stylesheet is served by the service at `STYLESHEET_PATH`; pages carry no inline script unless
 * it is allowed by its hash, and every value goes through the escaping `html` template.
 */
import { createHash } from 'node:crypto';
import { type Config, SERVICE_TITLE, serviceVersion } from '../config.ts';
import { type Html, html, jsonScript, raw } from './html.ts';

export const OG_IMAGE_PATH = '/og-image.svg';

export const STYLESHEET_PATH = '/assets/site.css';

export const stylesheet = `:root{--ink:#12202f;--muted:#4a5a6a;--line:#d5dde6;--bg:#f7f9fb;--card:#fff;--accent:#0b5cad;
--dark:#5b6470;--faint:#a04c00;--emerging:#7a5d00;--strong:#1f6f2b;--beacon:#0b5cad;--critical:#a11d1d;--warning:#8a5300;--info:#2d5d87}
*{box-sizing:border-box}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--accent)}a:focus-visible{outline:3px solid #f5b700;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
header.site{background:#0b1f3a;color:#fff}
header.site .bar{max-width:68rem;margin:0 auto;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between}
header.site a{color:#fff}
header.site .brand{font-weight:700;font-size:1.15rem;text-decoration:none}
header.site nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;margin:0;padding:0}
header.site nav a[aria-current=page]{text-decoration-thickness:3px}
.featured-brand{max-width:68rem;margin:0 auto;padding:.25rem 1rem .75rem;color:#dce6f3;font-size:.95rem}
.featured-brand a{color:#fff;font-weight:600}.featured-brand .muted{color:#dce6f3}
main{max-width:68rem;margin:0 auto;padding:1rem}
h1{font-size:1.9rem;line-height:1.2;margin:1rem 0 .5rem}h2{font-size:1.35rem;margin:2rem 0 .5rem}
code,pre{font:14px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef2f6;border-radius:4px}
code{padding:0 .2rem}pre{padding:.75rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:1rem 0}
.grid{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr))}
table{border-collapse:collapse;width:100%;background:var(--card)}
th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#eef2f6}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.tier{display:inline-block;padding:0 .5rem;border-radius:999px;color:#fff;font-size:.85rem;font-weight:600}
.tier-dark{background:var(--dark)}.tier-faint{background:var(--faint)}.tier-emerging{background:var(--emerging)}
.tier-strong{background:var(--strong)}.tier-beacon{background:var(--beacon)}
.up{color:var(--strong)}.down{color:var(--critical)}.new{color:var(--accent)}
.sev{font-weight:700}.sev-critical{color:var(--critical)}.sev-warning{color:var(--warning)}.sev-info{color:var(--info)}
.chart svg{max-width:100%;height:auto}
.muted{color:var(--muted)}.price{font-weight:600}
.sponsored{display:inline-block;border:1px solid var(--warning);color:var(--warning);border-radius:4px;padding:0 .35rem;font-size:.8rem;font-weight:600}
form.search{display:flex;gap:.5rem;flex-wrap:wrap;align-items:end}
form.search input{font:inherit;padding:.4rem .5rem;border:1px solid #8796a5;border-radius:4px;min-width:16rem}
button{font:inherit;padding:.4rem .9rem;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0;word-break:break-all}
.account-bar{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between}
form.inline{display:inline;margin:0}
form.stack{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}
form.stack label{flex-basis:100%;font-weight:600}
form.stack input{font:inherit;padding:.4rem .5rem;border:1px solid #8796a5;border-radius:4px;min-width:16rem}
a.button{display:inline-block;padding:.5rem 1.1rem;border-radius:4px;background:var(--accent);color:#fff;text-decoration:none;font-weight:600}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--critical);border-color:var(--critical)}
.notice{padding:.6rem .8rem;border-radius:6px;border:1px solid var(--line);background:var(--card)}
.notice-error{border-color:var(--critical);color:var(--critical)}.notice-done{border-color:var(--strong);color:var(--strong)}
.pixel{font-weight:600}.pixel-receiving{color:var(--strong)}.pixel-idle{color:var(--warning)}.pixel-not_installed{color:var(--muted)}
footer.site{max-width:68rem;margin:2rem auto;padding:1rem;border-top:1px solid var(--line);color:var(--muted);font-size:.9rem}
`;

export const stylesheetHash = createHash('sha256').update(stylesheet).digest('hex').slice(0, 12);

/** The pages in the navigation, in order. */
export const navigation = [
  { path: '/', label: 'Home' },
  { path: '/leaderboard', label: 'Leaderboard' },
  { path: '/agenthub', label: 'Agent hub' },
  { path: '/featured', label: 'Featured' },
  { path: '/souls', label: 'Souls' },
  { path: '/robot-soul', label: 'Robot soul API' },
  { path: '/agent-requests', label: 'For brands' },
  { path: '/docs', label: 'API reference' },
  { path: '/dashboard', label: 'Dashboard' },
] as const;

/** The Featured Brand shown in the header of every page, when the slot is held. */
export interface FeaturedBrand {
  domain: string;
  url: string;
  blurb: string | null;
}

/**
 * Where the Featured Brand goes in a page rendered once per process: replaced on every request
 * with the slot as it stands (`withFeaturedBrand`), so a paid bid shows at once on every page.
 */
export const FEATURED_MARKER = '<!--featured-brand-->';

export function featuredBrand(config: Config, brand: FeaturedBrand | null): Html {
  if (!brand) return html``;
  return html`<p class="featured-brand">Featured Brand: <a href="${brand.url}" rel="sponsored">${brand.domain}</a>${
    brand.blurb ? html` - ${brand.blurb}` : ''
  } <span class="muted">(sponsored, <a href="${config.site_url}/featured">the featured slot</a>)</span></p>`;
}

/** A rendered page with the current Featured Brand in its header. */
export const withFeaturedBrand = (page: string, config: Config, brand: FeaturedBrand | null): string =>
  page.replace(FEATURED_MARKER, featuredBrand(config, brand).value);

export interface LayoutInput {
  config: Config;
  /** Path of the page under the site (for the canonical URL and the current navigation entry). */
  path: string;
  title: string;
  description: string;
  body: Html;
  /** The Featured Brand; when left out, a marker `withFeaturedBrand` fills per request. */
  featured?: FeaturedBrand | null;
  /** The page's schema.org JSON-LD (default: a WebPage of the site). */
  jsonLd?: unknown;
  /** Extra elements for the head (e.g. the renderer's stylesheet on /docs). */
  head?: Html;
  /** Extra elements at the end of the body (external scripts from the service only). */
  tail?: Html;
}

export function layout(input: LayoutInput): string {
  const { config, path, title, description, body, featured } = input;
  const site = config.site_url;
  const canonical = `${site}${path}`;
  const jsonLd = input.jsonLd ?? {
    '@context': 'https://schema.org',
    '@type': 'WebPage',
    name: title,
    description,
    url: canonical,
    isPartOf: { '@type': 'WebSite', name: SERVICE_TITLE, url: `${site}/` },
  };
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - ${SERVICE_TITLE}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${canonical}">
<link rel="alternate" type="text/markdown" href="${canonical}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="${SERVICE_TITLE}">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${canonical}">
<meta property="og:image" content="${site}${OG_IMAGE_PATH}">
<script type="application/ld+json">${jsonScript(jsonLd)}</script>
<link rel="icon" type="image/svg+xml" href="${site}${OG_IMAGE_PATH}">
<link rel="stylesheet" href="${site}${STYLESHEET_PATH}?v=${stylesheetHash}">
${input.head ?? ''}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
<div class="bar">
<a class="brand" href="${site}/">${SERVICE_TITLE}</a>
<nav aria-label="Main"><ul>
${navigation.map(
  (n) =>
    html`<li><a href="${site}${n.path}"${n.path === path ? html` aria-current="page"` : ''}>${n.label}</a></li>`,
)}
</ul></nav>
</div>
${featured === undefined ? raw(FEATURED_MARKER) : featuredBrand(config, featured)}
</header>
<main id="main">
${body}
</main>
<footer class="site"><p>${SERVICE_TITLE} ${serviceVersion}. <a href="${site}/">Home</a> · <a href="${site}/docs">API reference</a> · <a href="${site}/llms.txt">llms.txt</a> · <a href="${site}/openapi.json">OpenAPI</a></p></footer>
${input.tail ?? ''}
</body>
</html>
`.value;
}

/**
 * The Content-Security-Policy of a page: scripts only from the service itself (or not at all),
 * styles from the service's stylesheet; on pages with charts, inline `style` attributes too (the
 * SVG's text styles; scripts never run inline).
 */
export function pageCsp(
  config: Config,
  options: { scripts?: boolean; extraImg?: string[]; svgCharts?: boolean } = {},
): string {
  const beacon = new URL(config.public_api_url).origin;
  return [
    "default-src 'self'",
    `script-src ${options.scripts ? "'self'" : "'none'"}`,
    "style-src 'self'",
    ...(options.svgCharts ? ["style-src-attr 'unsafe-inline'"] : []),
    `img-src 'self' data: ${[beacon, ...(options.extraImg ?? [])].join(' ')}`,
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');
}
