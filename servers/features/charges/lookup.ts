/**
 * The card charge lookup's answer, assembled from its three sources: the brand registry (the
 * matcher, in process), the descriptors brands declared (one indexed query), and - only when
 * neither names a brand with high confidence - live resolution (`resolution.ts`), whose stored
 * verdicts are one more indexed query and whose fresh ones wait at most the time budget.
 */
import { type Brand, BrandContact } from './brand-registry.ts';
import { isResolvable, merchantOfLine } from './candidates.ts';
import { type DeclaredMatch, type DescriptorDeclarations, registryRival } from './declarations.ts';
import { type BrandMatcher, levelOf } from './matcher.ts';
import { normalizeDescriptor } from './normalize.ts';
import type { MerchantResolver } from './resolution.ts';
import type { CardChargeMatch, ChargeLookupResult, Resolution } from './schemas.ts';

const MAX_RESULTS = 5;
const NONE_DECLARED: readonly DeclaredMatch[] = Object.freeze([]);
/** `high`: below it a lookup has no confident answer and live resolution is asked. */
const CONFIDENT = 0.85;
/** A declaration that meets the registry's exact alias of another brand ranks after it, at medium. */
const OUTRANKED_DECLARATION = 0.7;

export class ChargeLookup {
  readonly #brands: BrandMatcher;
  readonly #declarations: DescriptorDeclarations;
  readonly #resolver: MerchantResolver;
  /** Registry-only answers, per matcher result (which the matcher keeps while the line is cached). */
  readonly #answers = new WeakMap<ChargeLookupResult, ChargeLookupResult>();

  constructor(options: {
    brands: BrandMatcher;
    declarations: DescriptorDeclarations;
    resolver: MerchantResolver;
  }) {
    this.#brands = options.brands;
    this.#declarations = options.declarations;
    this.#resolver = options.resolver;
  }

  async lookup(charge: string): Promise<ChargeLookupResult> {
    const line = this.#brands.read(charge);
    const { result: registry, descriptor } = line;
    const declared = this.#declarations.mayMatch(descriptor)
      ? await this.#declarations.matchesFor(descriptor)
      : NONE_DECLARED;
    if (declared.length === 0 && registry.matches.some((m) => m.confidence >= CONFIDENT)) {
      return this.#registryOnly(registry, line.repeated);
    }

    let matches: CardChargeMatch[] = registry.matches.map((m) => ({
      ...m,
      source: m.source ?? ('registry' as const),
    }));
    for (const hit of declared) matches = this.#withDeclared(matches, hit, registry.processor);
    matches.sort((a, b) => b.confidence - a.confidence);

    let resolution: Resolution | undefined;
    if (!matches.some((m) => m.confidence >= CONFIDENT)) {
      const merchant = merchantOfLine(charge, descriptor);
      if (isResolvable(merchant)) {
        const found = await this.#resolver.resolve(merchant);
        resolution = found;
        if (found.status === 'resolved') {
          // The line's own website, now read and found to name the merchant: the site's own name for
          // it, at the better of the two confidences. A registry or declared match of that domain stays.
          const same = matches.findIndex((m) => m.domain === found.domain);
          if (same === -1 || matches[same]?.source === 'line') {
            const resolved = this.#resolvedMatch(found, registry.processor);
            if (same === -1) matches.push(resolved);
            else {
              const confidence = Math.max(resolved.confidence, matches[same]?.confidence ?? 0);
              matches[same] = { ...resolved, confidence, level: levelOf(confidence) };
            }
            matches.sort(byEvidence);
          }
        }
      }
    }
    return {
      ...registry,
      matches: matches.slice(0, MAX_RESULTS),
      ...(resolution ? { resolution } : {}),
    };
  }

  /**
   * The answer when the registry alone answers with confidence. For a line that comes back, the
   * same frozen object for as long as the matcher keeps the line: the operation layer checks its
   * output contract once and the adapters keep its JSON. A line seen for the first time gets a
   * fresh object that nothing keeps: most lines of a stream of new ones never come back, and
   * keeping an answer (three weak-map entries down the chain) costs more than making it.
   */
  #registryOnly(registry: ChargeLookupResult, repeated: boolean): ChargeLookupResult {
    let answer = repeated ? this.#answers.get(registry) : undefined;
    if (!answer) {
      answer = {
        ...registry,
        matches: registry.matches
          .map((m) => ({ ...m, source: m.source ?? ('registry' as const) }))
          .slice(0, MAX_RESULTS),
      };
      if (!repeated) return answer;
      Object.freeze(answer);
      this.#answers.set(registry, answer);
    }
    return answer;
  }

  /** A declaration joins the registry's matches: it marks the same brand's, or ranks by the rules. */
  #withDeclared(
    matches: CardChargeMatch[],
    hit: DeclaredMatch,
    processor: ChargeLookupResult['processor'],
  ): CardChargeMatch[] {
    const brand = this.#brands.brandByDomain(hit.domain);
    const exactRival = matches.some(
      (m) =>
        m.source === 'registry' &&
        m.domain !== hit.domain &&
        m.confidence >= 0.95 &&
        m.matched_on !== 'fuzzy',
    );
    const rival =
      exactRival ||
      registryRival(this.#brands, hit.descriptor, normalizeDescriptor(hit.descriptor).tokens, hit.domain) !==
        null;
    const confidence = rival ? OUTRANKED_DECLARATION : hit.confidence;
    const same = matches.find((m) => m.domain === hit.domain);
    const match: CardChargeMatch = {
      brand: brand?.name ?? hit.agentName ?? hit.domain,
      domain: hit.domain,
      category: brand?.category ?? same?.category ?? 'other',
      confidence: Math.max(confidence, same?.confidence ?? 0),
      level: levelOf(Math.max(confidence, same?.confidence ?? 0)),
      matched_on: 'descriptor',
      matched_text: hit.descriptor,
      ...(processor ? { processor } : {}),
      contact: brand?.contact ?? contactOf(hit.agentContact),
      returns: brand?.returns ?? {},
      source: 'brand_declared',
    };
    return [...matches.filter((m) => m.domain !== hit.domain), match];
  }

  #resolvedMatch(
    resolution: Extract<Resolution, { status: 'resolved' }>,
    processor: ChargeLookupResult['processor'],
  ): CardChargeMatch {
    const brand: Brand | undefined = this.#brands.brandByDomain(resolution.domain);
    return {
      brand: resolution.name,
      domain: resolution.domain,
      category: resolution.category,
      confidence: resolution.confidence,
      level: resolution.level,
      matched_on: 'name',
      matched_text: resolution.name,
      ...(processor ? { processor } : {}),
      contact: brand?.contact ?? {},
      returns: brand?.returns ?? {},
      source: 'live_resolution',
    };
  }
}

/**
 * Registry and live answers ranked together by their evidence (issue 32 item 7): a confident match
 * or the brand's own declaration first; then a site whose own page names the merchant
 * (`live_resolution` at medium), before a registry or line match that is itself a guess (below
 * `high`: a brand found among other words, a cut or near name); within each, by confidence, and a
 * live answer before another of equal confidence.
 */
function evidenceTier(m: CardChargeMatch): number {
  if (m.confidence >= CONFIDENT || m.source === 'brand_declared') return 0;
  return m.source === 'live_resolution' && m.confidence >= 0.7 ? 1 : 2;
}

function byEvidence(a: CardChargeMatch, b: CardChargeMatch): number {
  return (
    evidenceTier(a) - evidenceTier(b) ||
    b.confidence - a.confidence ||
    (a.source === 'live_resolution' ? 0 : 1) - (b.source === 'live_resolution' ? 0 : 1)
  );
}

/** A brand agent's published contact in the registry's contact shape (https support URLs only). */
function contactOf(contact: DeclaredMatch['agentContact']): CardChargeMatch['contact'] {
  if (!contact) return {};
  const parsed = BrandContact.safeParse({
    ...(contact.url?.startsWith('https://') ? { support_url: contact.url } : {}),
    ...(contact.email ? { email: contact.email } : {}),
    ...(contact.phone ? { phone: contact.phone } : {}),
  });
  return parsed.success ? parsed.data : {};
}
