/**
 * schema.org contact points in a page's JSON-LD: `ContactPoint` nodes (an organisation's
 * `contactPoint`, typed or not, or a `ContactPoint` anywhere) with their `email`, `telephone`,
 * `contactType` and `areaServed`, and `MerchantReturnPolicy` nodes' `merchantReturnLink`. Scripts
 * that are not JSON say nothing. The caller judges the addresses (`email.ts`, `phone.ts`).
 */
import { asArray, jsonLdNodesOf, typesOf } from '../../../page-reading.ts';
import { ORGANIZATION_WALK } from '../../scans/collectors/entity.ts';
import { absolute, type HtmlPage } from './pages.ts';
import type { FoundChannel } from './schemas.ts';

export interface ContactPoint {
  email: string | null;
  telephone: string | null;
  /** As written (`customer service`, `Returns`), or null when the node gives none. */
  contact_type: string | null;
  /** An ISO 3166-1 alpha-2 code when `areaServed` gives exactly one. */
  country: string | null;
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : null;

function contactPointOf(node: Record<string, unknown>): ContactPoint | null {
  const email = text(node.email)?.replace(/^mailto:/i, '') ?? null;
  const telephone = text(node.telephone)?.replace(/^tel:/i, '') ?? null;
  if (!email && !telephone) return null;
  const areas = asArray(node.areaServed)
    .map((a) => (typeof a === 'string' ? a : text((a as Record<string, unknown> | null)?.name)))
    .filter((a): a is string => typeof a === 'string' && /^[A-Za-z]{2}$/.test(a));
  return {
    email,
    telephone,
    contact_type: text(asArray(node.contactType)[0]),
    country: areas.length === 1 ? (areas[0] as string).toUpperCase() : null,
  };
}

/** The page's contact points, each once. */
export function contactPoints(page: HtmlPage): ContactPoint[] {
  const seen = new Set<string>();
  const out: ContactPoint[] = [];
  const add = (node: unknown) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    const point = contactPointOf(node as Record<string, unknown>);
    const key = JSON.stringify(point);
    if (point && !seen.has(key)) {
      seen.add(key);
      out.push(point);
    }
  };
  for (const node of jsonLdNodesOf(page.$, ORGANIZATION_WALK)) {
    if (typesOf(node).includes('ContactPoint')) add(node);
    // An organisation's contactPoint need not carry its own @type.
    for (const point of asArray(node.contactPoint)) add(point);
  }
  return out;
}

/** `MerchantReturnPolicy.merchantReturnLink`s on the brand's site. */
export function returnPolicies(page: HtmlPage, onSite: (url: URL) => boolean): FoundChannel[] {
  const out: FoundChannel[] = [];
  for (const node of jsonLdNodesOf(page.$, ORGANIZATION_WALK)) {
    if (!typesOf(node).includes('MerchantReturnPolicy')) continue;
    const url = absolute(text(node.merchantReturnLink) ?? undefined, page.url);
    if (!url || !onSite(url) || out.some((c) => c.address === url.href)) continue;
    out.push({
      kind: 'return_policy',
      address: url.href,
      detail: {},
      source_url: page.url.href,
      found_by: 'json_ld_return_policy',
    });
  }
  return out;
}
