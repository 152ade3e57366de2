/**
 * Statement descriptors that brands declare for their own verified domains ("your statement will
 * show HLCYN RSTRS"). A declared descriptor is matched at `very_high` and shown as
 * `brand_declared`. The rules that keep one domain from claiming another's charges:
 *
 * - only an account holding a verified site for the domain declares, and a declaration stops
 *   matching when that verification is gone (`repository.ts` joins `sites`);
 * - a descriptor belongs to one domain: the first to declare it (`descriptor_key` is unique);
 * - a domain's set belongs to the account that declared it first (as its brand agent does);
 * - a descriptor that is exactly an alias of a different brand in the curated registry (or that
 *   the registry names at very_high) cannot be declared at all, and if the registry later learns
 *   it as another brand's alias, the registry wins at lookup (the declaration drops to medium,
 *   after it);
 * - at most 20 per domain, 40 characters each (DE43's whole merchant field), no control
 *   characters, at least 4 letters or digits besides a processor prefix.
 *
 * Every lookup asks whether the line carries a declared descriptor, and almost none does: each
 * process keeps the set of declared keys in memory and queries the table only for a line whose
 * leading words are in it, so the common path stays in process. The set takes in what this
 * process declares at once and what others declared within `KEYS_REFRESH_MS`; a key that is no
 * longer declared only costs a query until the hourly rebuild (the table has the last word).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../../db/database.ts';
import type { Database, DeclaredDescriptorRow } from '../../../db/schema.ts';
import { type FieldError, invalid, ServiceError } from '../../errors.ts';
import type { BrandMatcher } from './matcher.ts';
import { type NormalizedDescriptor, normalizeDescriptor } from './normalize.ts';
import {
  type DeclaredHit,
  declaredByKeys,
  declaredForDomain,
  declaredKeysSince,
  holdersOf,
  replaceDeclared,
} from './repository.ts';

export const MAX_DECLARED_PER_DOMAIN = 20;
export const MAX_DESCRIPTOR_LENGTH = 40;
/** Lines are tried with their leading runs of at most this many tokens. */
const MAX_KEY_TOKENS = 8;
/** How soon a declaration made by another process is matched here. */
const KEYS_REFRESH_MS = 5_000;
/** How often the key set is rebuilt from scratch, dropping keys no longer declared. */
const KEYS_REBUILD_MS = 3_600_000;
/** Declarations read again on each refresh: a transaction that committed later than it began. */
const KEYS_OVERLAP_MS = 60_000;

/** A declaration of the descriptors of one domain, as the API shows it. */
export interface DeclaredSet {
  domain: string;
  descriptors: { descriptor: string; processor: string | null; declared_at: string }[];
}

interface Prepared {
  descriptor: string;
  key: string;
  processor: string | null;
  field: string;
}

/** A declared descriptor that matches a statement line. */
export interface DeclaredMatch {
  domain: string;
  descriptor: string;
  /** 0.98 when it is the whole merchant part of the line, 0.9 when words follow it. */
  confidence: number;
  agentName: string | null;
  agentContact: { email?: string; url?: string; phone?: string } | null;
}

export class DescriptorDeclarations {
  readonly #db: Kysely<Database>;
  readonly #brands: BrandMatcher;
  readonly #now: () => Date;
  #keys = new Set<string>();
  /** Latest `created_at` read, and when the set was refreshed and rebuilt (process clock). */
  #newest: string | null = null;
  #refreshedAt = Number.NEGATIVE_INFINITY;
  #rebuiltAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | null = null;
  /** While a rebuild reads the table: what this process declares meanwhile, kept through the swap. */
  #declaredDuringRebuild: Set<string> | null = null;

  constructor(options: { db: Kysely<Database>; brands: BrandMatcher; now: () => Date }) {
    this.#db = options.db;
    this.#brands = options.brands;
    this.#now = options.now;
  }

  /**
   * Replaces the descriptors `domain` declares (the caller has checked that `accountId` verified it).
   * `field` names the input array in errors (`descriptors`, `statement_descriptors`).
   */
  async replace(accountId: string, domain: string, raw: string[], field: string): Promise<DeclaredSet> {
    const prepared = this.#prepare(raw, field, domain);
    const existing = await declaredForDomain(this.#db, domain);
    const owner = existing[0]?.account_id;
    if (owner !== undefined && owner !== accountId) {
      throw new ServiceError('descriptor_taken', {
        detail: `Another account declared the statement descriptors of ${domain}; it can change or clear them`,
      });
    }
    const holders = await holdersOf(
      this.#db,
      prepared.map((p) => p.key),
    );
    const taken = prepared
      .filter((p) => {
        const holder = holders.get(p.key);
        return holder !== undefined && holder !== domain;
      })
      .map((p) => ({ field: p.field, message: 'is declared by another domain' }));
    if (taken.length > 0) throw descriptorTaken(taken);

    const at = this.#now().toISOString();
    const rows: DeclaredDescriptorRow[] = prepared.map((p) => ({
      id: randomUUID(),
      account_id: accountId,
      domain,
      descriptor: p.descriptor,
      descriptor_key: p.key,
      processor: p.processor,
      created_at: existing.find((e) => e.descriptor_key === p.key)?.created_at ?? at,
    }));
    try {
      await this.#db.transaction().execute((trx) => replaceDeclared(trx, domain, rows));
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ServiceError('descriptor_taken', {
          detail:
            'A descriptor was declared by another domain at the same moment; send the declaration again',
        });
      }
      throw err;
    }
    for (const row of rows) {
      this.#keys.add(row.descriptor_key);
      this.#declaredDuringRebuild?.add(row.descriptor_key);
    }
    return setOf(domain, rows);
  }

  async list(domain: string): Promise<DeclaredSet> {
    return setOf(domain, await declaredForDomain(this.#db, domain));
  }

  /**
   * Whether a declared descriptor may match the line, answered at once, without a query or a
   * promise, once the declared keys are known: a line no brand declared (nearly every line) skips
   * `matchesFor`. True before the first read of the keys, which `matchesFor` waits for.
   */
  mayMatch(descriptor: NormalizedDescriptor): boolean {
    const known = this.#keysNow();
    if (!known) return true;
    const { tokens } = descriptor;
    let key = '';
    for (let k = 0; k < Math.min(tokens.length, MAX_KEY_TOKENS); k++) {
      key += tokens[k];
      if (known.has(key)) return true;
    }
    return false;
  }

  /** Declared descriptors that match the line (one query, by the squashed leading runs of its tokens). */
  async matchesFor(descriptor: NormalizedDescriptor): Promise<DeclaredMatch[]> {
    const { tokens, merchantTokens } = descriptor;
    if (tokens.length === 0) return [];
    await this.#keysRead();
    if (!this.mayMatch(descriptor)) return [];
    // The squashed leading runs, as `mayMatch` builds them.
    const keys: string[] = [];
    let key = '';
    for (let k = 0; k < Math.min(tokens.length, MAX_KEY_TOKENS); k++) {
      key += tokens[k];
      keys.push(key);
    }
    const hits = await declaredByKeys(this.#db, keys);
    const matches: DeclaredMatch[] = [];
    for (const hit of hits) {
      if (hit.processor !== null && hit.processor !== (descriptor.processor?.id ?? null)) continue;
      const length = keys.indexOf(hit.descriptor_key) + 1;
      matches.push({
        domain: hit.domain,
        descriptor: hit.descriptor,
        confidence: length >= merchantTokens.length ? 0.98 : 0.9,
        agentName: hit.agent_name,
        agentContact: contactOf(hit),
      });
    }
    return matches.sort((a, b) => b.confidence - a.confidence);
  }

  /**
   * The declared keys are read once before the first lookup, then refreshed in the background.
   * Before the first read there is no set to fall back on: the lookup waits for it (or fails with it).
   */
  async #keysRead(): Promise<void> {
    if (!this.#keysNow()) await this.#refreshing;
  }

  /** The declared keys as known now (a refresh started in the background when due); none before the first read. */
  #keysNow(): Set<string> | undefined {
    const stale = performance.now() - this.#refreshedAt > KEYS_REFRESH_MS;
    if (stale && !this.#refreshing) {
      const refreshing = this.#refreshKeys().finally(() => {
        this.#refreshing = null;
      });
      // A failed background refresh keeps the set it had and is tried again on a later lookup.
      refreshing.catch(() => {});
      this.#refreshing = refreshing;
    }
    return this.#refreshedAt === Number.NEGATIVE_INFINITY ? undefined : this.#keys;
  }

  async #refreshKeys(): Promise<void> {
    const started = performance.now();
    const rebuild = started - this.#rebuiltAt > KEYS_REBUILD_MS;
    const since =
      rebuild || this.#newest === null
        ? null
        : new Date(new Date(this.#newest).getTime() - KEYS_OVERLAP_MS).toISOString();
    if (rebuild) this.#declaredDuringRebuild = new Set();
    try {
      const rows = await declaredKeysSince(this.#db, since);
      const keys = rebuild ? new Set<string>() : this.#keys;
      for (const row of rows) {
        keys.add(row.descriptor_key);
        if (this.#newest === null || row.created_at > this.#newest) this.#newest = row.created_at;
      }
      if (rebuild) {
        for (const key of this.#declaredDuringRebuild ?? []) keys.add(key);
        this.#keys = keys;
        this.#rebuiltAt = started;
      }
      this.#refreshedAt = started;
    } finally {
      if (rebuild) this.#declaredDuringRebuild = null;
    }
  }

  #prepare(raw: string[], field: string, domain: string): Prepared[] {
    const errors: FieldError[] = [];
    const conflicts: FieldError[] = [];
    const byKey = new Map<string, Prepared>();
    for (const [i, text] of raw.entries()) {
      const at = `${field}.${i}`;
      const checked = this.#check(text, domain);
      if ('invalid' in checked) errors.push({ field: at, message: checked.invalid });
      else if ('taken' in checked) conflicts.push({ field: at, message: checked.taken });
      else if (!byKey.has(checked.key)) byKey.set(checked.key, { ...checked, field: at });
    }
    if (raw.length > MAX_DECLARED_PER_DOMAIN) {
      errors.push({ field, message: `must hold at most ${MAX_DECLARED_PER_DOMAIN} descriptors` });
    }
    if (errors.length > 0) throw invalid(errors);
    if (conflicts.length > 0) throw descriptorTaken(conflicts);
    return [...byKey.values()];
  }

  /** One descriptor, normalised and keyed, or why it cannot be declared by `domain`. */
  #check(text: string, domain: string): Omit<Prepared, 'field'> | { invalid: string } | { taken: string } {
    if (/\p{Cc}/u.test(text)) return { invalid: 'must not contain control characters' };
    const descriptor = text.normalize('NFKC').replace(/\s+/g, ' ').trim().toUpperCase();
    if (descriptor.length === 0) return { invalid: 'must not be blank' };
    if (descriptor.length > MAX_DESCRIPTOR_LENGTH) {
      return { invalid: `must be at most ${MAX_DESCRIPTOR_LENGTH} characters` };
    }
    const normalized = normalizeDescriptor(descriptor);
    const key = normalized.tokens.join('');
    if (key.length < 4 || (key.match(/[A-Z]/g)?.length ?? 0) < 3) {
      return {
        invalid:
          'must name the merchant with at least 4 letters or digits (3 of them letters), besides a processor prefix',
      };
    }
    const rival = registryRival(this.#brands, descriptor, normalized.tokens, domain);
    if (rival) return { taken: `is the statement descriptor of ${rival.name} (${rival.domain})` };
    return { descriptor, key, processor: normalized.processor?.id ?? null };
  }
}

/**
 * The brand of the curated registry that this descriptor already names, other than `domain`: one
 * whose alias it is exactly, or that the registry names for it at very_high (a domain or a
 * merchant of record in the text). A brand whose name merely starts with another brand's word
 * ("DELTA DENTAL" after "DELTA") is not a rival.
 */
export function registryRival(
  brands: BrandMatcher,
  descriptor: string,
  tokens: readonly string[],
  domain: string,
): { name: string; domain: string } | null {
  const alias = brands.brandsWithAlias(tokens).find((b) => b.domain !== domain);
  if (alias) return { name: alias.name, domain: alias.domain };
  const named = brands
    .lookupUncached(descriptor)
    .matches.find((m) => m.confidence >= 0.95 && m.matched_on !== 'fuzzy' && m.domain !== domain);
  return named ? { name: named.brand, domain: named.domain } : null;
}

function descriptorTaken(errors: FieldError[]): ServiceError {
  return new ServiceError('descriptor_taken', {
    errors,
    detail: errors.map((e) => `${e.field}: ${e.message}`).join('; '),
  });
}

function setOf(domain: string, rows: DeclaredDescriptorRow[]): DeclaredSet {
  return {
    domain,
    descriptors: rows.map((r) => ({
      descriptor: r.descriptor,
      processor: r.processor,
      declared_at: r.created_at,
    })),
  };
}

function contactOf(hit: DeclaredHit): DeclaredMatch['agentContact'] {
  if (!hit.agent_contact) return null;
  try {
    return JSON.parse(hit.agent_contact) as DeclaredMatch['agentContact'];
  } catch {
    return null;
  }
}
