/**
 * Who sent a reply, as far as the mail itself proves it: SPF, DKIM and DMARC evaluated by mailauth
 * (the nodemailer project's implementation of RFC 7208, 6376 and DMARC, RFC 9989) with the SMTP
 * session's facts (client address, HELO, MAIL FROM) and the service's outbound DNS servers
 * (`outbound.dns_servers`), so a local test world resolves the brand's keys and policies too.
 *
 * The author (the From header's domain) is authenticated when DMARC passes - SPF or DKIM aligned
 * with it - or, for a domain that publishes no DMARC record, when a DKIM signature of that domain
 * (or its organizational domain) passes. A reply is then verified if the author is the brand
 * (`isBrandSender`).
 */
import type { MxRecord } from 'node:dns';
import { type AuthenticateResult, authenticate, type DNSResolver } from 'mailauth';
import { getDomain } from 'tldts';
import type { OutboundResolver } from '../../../outbound/dns-lookup.ts';
import { withinBudget } from '../../../time-budget.ts';

export interface SmtpFacts {
  /** The connecting client's address. */
  ip: string;
  helo: string | null;
  /** MAIL FROM; empty for a bounce (null sender). */
  mailFrom: string;
}

export interface SenderCheck {
  /** The From header's address, lowercase; null when there is none or more than one. */
  from: string | null;
  /** Its domain, lowercase. */
  authorDomain: string | null;
  /** DMARC's result (`pass`, `fail`, `none`, `temperror`...), or why it was not evaluated. */
  dmarc: string;
  /** Whether the author domain is proven (see the file's header). */
  authenticated: boolean;
}

type MailDns = Pick<OutboundResolver, 'resolveTxt' | 'resolveMx' | 'resolve4' | 'resolve6'>;

/**
 * A `dns.promises.resolve`-shaped resolver over the outbound DNS: the record types SPF, DKIM and
 * DMARC ask for. Anything else (SPF's deprecated `ptr`) answers "no data".
 */
export function mailResolver(dns: MailDns): DNSResolver {
  return (async (name: string, rrtype: string): Promise<string[][] | string[] | MxRecord[]> => {
    switch (rrtype.toUpperCase()) {
      case 'TXT':
        return dns.resolveTxt(name);
      case 'MX':
        return dns.resolveMx(name);
      case 'A':
        return dns.resolve4(name);
      case 'AAAA':
        return dns.resolve6(name);
      default:
        throw Object.assign(new Error(`${rrtype} lookups are not made`), { code: 'ENODATA' });
    }
  }) as DNSResolver;
}

/** Evaluates the mail; a check that takes longer than `timeoutMs` counts as not authenticated. */
export async function checkSender(
  raw: Buffer,
  smtp: SmtpFacts,
  options: { resolver: DNSResolver; mta: string; timeoutMs: number },
): Promise<SenderCheck> {
  const result = await withinBudget(
    authenticate(raw, {
      ip: smtp.ip.replace(/^::ffff:/, ''),
      ...(smtp.helo ? { helo: smtp.helo } : {}),
      sender: smtp.mailFrom,
      mta: options.mta,
      resolver: options.resolver,
      disableArc: true,
      disableBimi: true,
    }),
    options.timeoutMs,
  );
  if (!result) return { ...fromOf(null), dmarc: 'timeout', authenticated: false };
  const author = fromOf(result);
  if (!result.dmarc) return { ...author, dmarc: 'unevaluated', authenticated: false };
  const dmarc = result.dmarc.status.result;
  const alignedDkim = result.dkim.results.some(
    (r) => r.status.result === 'pass' && typeof r.status.aligned === 'string',
  );
  return { ...author, dmarc, authenticated: dmarc === 'pass' || (dmarc === 'none' && alignedDkim) };
}

function fromOf(result: AuthenticateResult | null): Pick<SenderCheck, 'from' | 'authorDomain'> {
  const from = result?.dkim.headerFrom ?? [];
  const only = from.length === 1 && result?.dkim.fromFields === 1 ? (from[0] as string).toLowerCase() : null;
  const at = only?.lastIndexOf('@') ?? -1;
  return { from: only, authorDomain: only && at > 0 ? only.slice(at + 1) : null };
}

/**
 * Whether an authenticated author is the brand: its organizational domain is the brand's
 * (`mail.brand.com` for `brand.com`), or it is exactly the domain of an address the request was
 * mailed to - a registry address may sit on a help desk's domain (`brand.helpdesk.example`), whose
 * other customers share its organizational domain and so must not count.
 */
export function isBrandSender(
  check: SenderCheck,
  brand: { domain: string; mailedDomains: readonly string[] },
): boolean {
  if (!check.authenticated || !check.authorDomain) return false;
  const author = normal(check.authorDomain);
  if (organizational(author) === organizational(brand.domain)) return true;
  return brand.mailedDomains.some((domain) => normal(domain) === author);
}

const normal = (domain: string): string => domain.toLowerCase().replace(/\.$/, '');
const organizational = (domain: string): string => getDomain(normal(domain)) ?? normal(domain);
