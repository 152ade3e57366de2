/**
 * Where a site's pages are fetched from. What a domain is - and which names a deployment accepts -
 * is the one public-address rule of `servers/public-address.ts`.
 */
import { isLocalDomain } from '../../public-address.ts';

/** The origin pages of a domain are fetched from: https for public names, http for local fixtures. */
export function siteOrigin(domain: string): string {
  return isLocalDomain(domain) ? `http://${domain}` : `https://${domain}`;
}
