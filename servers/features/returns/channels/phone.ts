/**
 * Phone numbers: `tel:` links (RFC 3966) and `ContactPoint.telephone`, normalised to E.164 with
 * libphonenumber-js. A number written without its country code is read in the country the contact
 * point serves (`areaServed`) or the brand's country-code TLD (`.de`, `.co.uk`); with neither, it
 * cannot be placed and is refused rather than guessed.
 */
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { getPublicSuffix } from 'tldts';
import type { HtmlPage } from './pages.ts';

/** The country a brand domain's TLD names (`uk` is GB), if it is a country-code TLD. */
export function countryOfDomain(domain: string): CountryCode | undefined {
  const tld = (getPublicSuffix(domain) ?? '').split('.').at(-1)?.toUpperCase() ?? '';
  const code = tld === 'UK' ? 'GB' : tld;
  return code.length === 2 && isSupportedCountry(code) ? code : undefined;
}

export type PhoneResult = { ok: true; e164: string } | { ok: false; reason: string };

/** `raw` as E.164, reading a national number in `country` when it has no `+`. */
export function normalisePhone(raw: string, country: CountryCode | undefined): PhoneResult {
  const written = raw.replace(/^tel:/i, '').split(';')[0]?.trim() ?? '';
  let text: string;
  try {
    text = decodeURIComponent(written);
  } catch {
    text = written;
  }
  if (!text.startsWith('+') && !country)
    return { ok: false, reason: 'no country code, and the domain names no country to read it in' };
  const number = parsePhoneNumberFromString(text, country);
  if (!number?.isValid()) return { ok: false, reason: 'not a valid phone number' };
  return { ok: true, e164: number.number };
}

/** The `tel:` links of the page, as written, each once. */
export function telLinks(page: HtmlPage): string[] {
  const found = new Set<string>();
  page.$('a[href^="tel:" i]').each((_, el) => {
    const href = page.$(el).attr('href');
    if (href) found.add(href.trim());
  });
  return [...found];
}
