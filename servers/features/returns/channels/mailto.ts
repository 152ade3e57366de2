/**
 * `mailto:` links of a page (RFC 6068): every address of each link's path (comma-separated,
 * percent-decoded), lower-cased, each once. Whether an address may be used is `email.ts`'s call.
 */
import type { HtmlPage } from './pages.ts';

export function mailtoAddresses(page: HtmlPage): string[] {
  const found = new Set<string>();
  page.$('a[href^="mailto:" i]').each((_, el) => {
    const href = page.$(el).attr('href') ?? '';
    const to = href.slice('mailto:'.length).split('?')[0] ?? '';
    for (const part of to.split(',')) {
      let address: string;
      try {
        address = decodeURIComponent(part).trim().toLowerCase();
      } catch {
        continue;
      }
      if (address.includes('@')) found.add(address);
    }
  });
  return [...found];
}
