/**
 * Chat widgets a page loads, recognised by the vendor's script host (in a `<script src>` or the
 * loader snippet of an inline script). The channel is the page that opens the chat: the person
 * chats there; the service does not.
 */
import type { HtmlPage } from './pages.ts';
import type { FoundChannel } from './schemas.ts';

/** Vendors' script hosts, as their install instructions give them. */
const vendors: [string, RegExp][] = [
  ['Zendesk', /\bstatic\.zdassets\.com\/ekr\/snippet\.js|\bzopim\.com\b/i],
  ['Intercom', /\bwidget\.intercom\.io\b|\bjs\.intercomcdn\.com\b/i],
  ['Drift', /\bjs\.driftt\.com\b/i],
  ['LiveChat', /\bcdn\.livechatinc\.com\b/i],
  ['Freshchat', /\bwchat\.freshchat\.com\b|\bfw-cdn\.com\b/i],
  ['HubSpot', /\bjs\.hs-scripts\.com\b|\bjs\.usemessages\.com\b/i],
  ['Tawk.to', /\bembed\.tawk\.to\b/i],
  ['Crisp', /\bclient\.crisp\.chat\b/i],
  ['Gorgias', /\bconfig\.gorgias\.chat\b/i],
  ['Tidio', /\bcode\.tidio\.co\b/i],
  ['Olark', /\bstatic\.olark\.com\b/i],
  ['Salesforce', /\bembeddedservice\b.*\bforce\.com\b|\bforce\.com\/embeddedservice\b/i],
  ['Kustomer', /\bcdn\.kustomerapp\.com\b/i],
  ['Gladly', /\bcdn\.gladly\.com\b/i],
];

export function chatWidget(page: HtmlPage): FoundChannel | null {
  const scripts: string[] = [];
  page.$('script').each((_, el) => {
    const script = page.$(el);
    scripts.push(script.attr('src') ?? script.text().slice(0, 4000));
  });
  const said = scripts.join('\n');
  const vendor = vendors.find(([, host]) => host.test(said))?.[0];
  return vendor
    ? {
        kind: 'chat',
        address: page.url.href,
        detail: { vendor },
        source_url: page.url.href,
        found_by: 'chat_widget',
      }
    : null;
}
