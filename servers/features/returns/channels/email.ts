/**
 * Which email addresses found on a brand's site may become a channel. Three rules, in order:
 *
 * 1. **A role, never a person.** The local part (before `@`, without a `+tag`) must be a role: made
 *    only of known role words (`support`, `help`, `care`, `service`, `customerservice`, `returns`,
 *    `refunds`, `billing`, `contact`, `hello`, `info`, `orders`, ... see `roleWords`), optionally
 *    joined by `.`, `-` or `_` and qualified by a region (`support-uk`, `returns.eu`). Anything
 *    else is refused: an address made of name-like words (`jane.doe`, `jdoe`, `m.smith`) may name
 *    a person, and the service never sends a person's request to another person's mailbox on a
 *    guess. An allowlist, so an unknown word is refused, not let through.
 * 2. **The brand's own domain.** The address's registrable domain must be the brand's
 *    (`help.brand.com` for `brand.com` is; `brand-support.com` or a help-desk vendor's is not).
 * 3. **A domain that takes mail.** Its MX records, through the configured resolver
 *    (`outbound.dns_servers`), name an exchanger; with no MX, an A or AAAA record stands for one
 *    (RFC 5321 section 5.1, the implicit MX); a null MX (RFC 7505) or no such domain is refused.
 */
import { getDomain } from 'tldts';
import { z } from 'zod';
import type { OutboundResolver } from '../../../outbound/dns-lookup.ts';

/** Words a role address is made of. */
export const roleWords = new Set([
  'support',
  'help',
  'helpdesk',
  'care',
  'service',
  'services',
  'customer',
  'customers',
  'customerservice',
  'customercare',
  'customersupport',
  'cs',
  'returns',
  'return',
  'refunds',
  'refund',
  'exchanges',
  'billing',
  'payments',
  'accounts',
  'orders',
  'order',
  'contact',
  'contactus',
  'hello',
  'hi',
  'info',
  'enquiries',
  'inquiries',
  'feedback',
  'complaints',
  'team',
  'shop',
  'store',
  'sales',
  'office',
  'bookings',
  'reservations',
  'guest',
  'guests',
  'members',
  'membership',
  'desk',
  'center',
  'centre',
]);

/** Region qualifiers a role may carry: two letters (`uk`, `de`) or a region's name. */
const region = /^(?:[a-z]{2}|global|intl|international|europe|emea|apac|americas|latam)$/;

const validAddress = z.email();

export type EmailVerdict = { ok: true; address: string; domain: string } | { ok: false; reason: string };

/** Rules 1 and 2: `raw` (as found) as an address of the brand's, or why not. */
export function judgeAddress(raw: string, brandDomain: string): EmailVerdict {
  const address = raw.trim().toLowerCase();
  if (!validAddress.safeParse(address).success) return { ok: false, reason: 'not an email address' };
  const at = address.lastIndexOf('@');
  const local = (address.slice(0, at).split('+')[0] ?? '').replace(/\.$/, '');
  const domain = address.slice(at + 1);
  const tokens = local.split(/[._-]+/).filter(Boolean);
  const role =
    roleWords.has(tokens.join('')) ||
    (tokens.length > 0 &&
      tokens.length <= 3 &&
      roleWords.has(tokens[0] as string) &&
      tokens.slice(1).every((t) => roleWords.has(t) || region.test(t)));
  if (!role) {
    return {
      ok: false,
      reason:
        tokens.length >= 2 && tokens.every((t) => /^[a-z]+$/.test(t))
          ? 'names a person (first.last): only role addresses such as support@ or returns@ are used'
          : 'not a role address such as support@ or returns@ (an address that may name a person is never used)',
    };
  }
  if ((getDomain(domain) ?? domain) !== brandDomain) {
    return { ok: false, reason: `on another domain than ${brandDomain}` };
  }
  return { ok: true, address, domain };
}

export type MailDomainVerdict = { ok: true; via: 'mx' | 'address' } | { ok: false; reason: string };

const code = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? 'error';

/** Rule 3: whether `domain` takes mail, as its DNS says. */
export async function takesMail(
  dns: Pick<OutboundResolver, 'resolveMx' | 'resolve4' | 'resolve6'>,
  domain: string,
): Promise<MailDomainVerdict> {
  try {
    const records = await dns.resolveMx(domain);
    const exchangers = records.filter((r) => r.exchange !== '' && r.exchange !== '.');
    if (exchangers.length > 0) return { ok: true, via: 'mx' };
    if (records.length > 0)
      return { ok: false, reason: `${domain} publishes a null MX: it takes no mail (RFC 7505)` };
  } catch (err) {
    if (code(err) === 'ENOTFOUND') return { ok: false, reason: `${domain} does not exist in DNS` };
    if (code(err) !== 'ENODATA')
      return { ok: false, reason: `the MX lookup of ${domain} failed (${code(err)})` };
  }
  // No MX: the domain's own address is its implicit mail exchanger (RFC 5321 section 5.1).
  const addresses = await Promise.allSettled([dns.resolve4(domain), dns.resolve6(domain)]);
  if (addresses.some((r) => r.status === 'fulfilled' && r.value.length > 0))
    return { ok: true, via: 'address' };
  return { ok: false, reason: `${domain} has no MX, A or AAAA record: it takes no mail` };
}
