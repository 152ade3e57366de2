/**
 * Sites registered by accounts, and proof that an account controls a domain: a token served at
 * `/.well-known/agent-service-verification.txt` on the site, or a DNS TXT record
 * `agent-service-verification=<token>` on the domain. Fetches go through the SSRF-safe fetcher
 * with the scanner's address policy (private networks only when `scanner.allow_private_networks`,
 * this machine's loopback addresses in development mode too: `localSitesAllowed`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../../db/database.ts';
import type { Database, SiteRow } from '../../../db/schema.ts';
import { notFound } from '../../errors.ts';
import type { OutboundResolver } from '../../outbound/dns-lookup.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import { isLocalDomain } from '../../public-address.ts';
import { siteOrigin } from './domain.ts';

export const VERIFICATION_NAME = 'agent-service-verification';
export const VERIFICATION_PATH = `/.well-known/${VERIFICATION_NAME}.txt`;
/** The verification file is a few bytes; anything past this is not read. */
const MAX_VERIFICATION_BYTES = 4096;

export interface VerificationCheck {
  method: 'http' | 'dns';
  passed: boolean;
  /** What was seen, for the owner: a status code, a record count or why it could not be checked. */
  detail: string;
}

export interface VerificationOutcome {
  site: SiteRow;
  checks: VerificationCheck[];
}

export interface SitesServiceOptions {
  db: Kysely<Database>;
  /** SSRF-safe fetch with the scanner's address policy. */
  fetch: SafeFetch;
  /** Where TXT records are asked (`sites.verification_dns_servers`, else `outbound.dns_servers`). */
  dns: Pick<OutboundResolver, 'resolveTxt'>;
  now?: () => Date;
}

export class SitesService {
  readonly #db: Kysely<Database>;
  readonly #fetch: SafeFetch;
  readonly #dns: Pick<OutboundResolver, 'resolveTxt'>;
  readonly #now: () => Date;

  constructor(options: SitesServiceOptions) {
    this.#db = options.db;
    this.#fetch = options.fetch;
    this.#now = options.now ?? (() => new Date());
    this.#dns = options.dns;
  }

  /**
   * Registers a domain for an account, or returns the existing registration (`created: false`).
   * Runs in the caller's transaction when one is given (an account created in the same request).
   */
  async register(
    accountId: string,
    domain: string,
    options: { shareNetwork?: boolean | undefined; db?: Kysely<Database> } = {},
  ): Promise<{ site: SiteRow; created: boolean }> {
    const db = options.db ?? this.#db;
    const existing = await this.#find(db, accountId, domain);
    if (existing) {
      if (options.shareNetwork !== undefined && Number(options.shareNetwork) !== existing.share_network) {
        await db
          .updateTable('sites')
          .set({ share_network: Number(options.shareNetwork) })
          .where('id', '=', existing.id)
          .execute();
        existing.share_network = Number(options.shareNetwork);
      }
      return { site: existing, created: false };
    }
    const site: SiteRow = {
      id: randomUUID(),
      account_id: accountId,
      domain,
      verification_token: randomBytes(18).toString('base64url'),
      verified_at: null,
      verification_method: null,
      share_network: Number(options.shareNetwork ?? false),
      created_at: this.#now().toISOString(),
    };
    try {
      await db.insertInto('sites').values(site).execute();
      return { site, created: true };
    } catch (err) {
      // Two concurrent registrations of the same domain by one account: the other one won.
      const raced = isUniqueViolation(err) ? await this.#find(db, accountId, domain) : undefined;
      if (raced) return { site: raced, created: false };
      throw err;
    }
  }

  async get(siteId: string): Promise<SiteRow | undefined> {
    return this.#db.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirst();
  }

  /** A site of this account; another account's site id is answered as not found. */
  async getOwned(accountId: string, siteId: string): Promise<SiteRow> {
    const site = await this.#db
      .selectFrom('sites')
      .selectAll()
      .where('id', '=', siteId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!site) throw notFound(`No site ${siteId} on this account`);
    return site;
  }

  async listForAccount(accountId: string): Promise<SiteRow[]> {
    return this.#db
      .selectFrom('sites')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** The account's verified registration of a domain, if any. */
  async verifiedSite(accountId: string, domain: string): Promise<SiteRow | undefined> {
    return this.#db
      .selectFrom('sites')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('domain', '=', domain)
      .where('verified_at', 'is not', null)
      .executeTakeFirst();
  }

  /**
   * The verification tokens of the newest registrations of `domain`, across accounts: what a
   * deployment serves for its own host in development mode (`adapters/discovery.ts`).
   */
  async tokensFor(domain: string, limit: number): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('sites')
      .select('verification_token')
      .where('domain', '=', domain)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => row.verification_token);
  }

  /** Checks both proofs (the file first) and records the first that passes. */
  async verify(accountId: string, siteId: string): Promise<VerificationOutcome> {
    const site = await this.getOwned(accountId, siteId);
    const checks = [await this.#checkFile(site)];
    if (!checks[0]?.passed) checks.push(await this.#checkDns(site));
    const passed = checks.find((c) => c.passed);
    if (passed && !site.verified_at) {
      const verifiedAt = this.#now().toISOString();
      await this.#db
        .updateTable('sites')
        .set({ verified_at: verifiedAt, verification_method: passed.method })
        .where('id', '=', site.id)
        .execute();
      site.verified_at = verifiedAt;
      site.verification_method = passed.method;
    }
    return { site, checks };
  }

  async #checkFile(site: SiteRow): Promise<VerificationCheck> {
    const url = siteOrigin(site.domain) + VERIFICATION_PATH;
    try {
      const res = await this.#fetch(url, { redirect: 'follow', headers: { accept: 'text/plain' } });
      if (!res.ok) {
        await res.body?.cancel();
        return { method: 'http', passed: false, detail: `${url} answered ${res.status}` };
      }
      const text = await readAtMost(res, MAX_VERIFICATION_BYTES);
      const passed = text
        .split(/\s+/)
        .some(
          (word) =>
            word === site.verification_token || word === `${VERIFICATION_NAME}=${site.verification_token}`,
        );
      return {
        method: 'http',
        passed,
        detail: passed ? `token found at ${url}` : `${url} does not contain the token`,
      };
    } catch (err) {
      return {
        method: 'http',
        passed: false,
        detail: `${url} could not be fetched (${describeFetchError(err)})`,
      };
    }
  }

  async #checkDns(site: SiteRow): Promise<VerificationCheck> {
    if (isLocalDomain(site.domain))
      return { method: 'dns', passed: false, detail: 'local domains have no DNS records' };
    try {
      const records = (await this.#dns.resolveTxt(site.domain)).map((chunks) => chunks.join(''));
      const passed = records.includes(`${VERIFICATION_NAME}=${site.verification_token}`);
      return {
        method: 'dns',
        passed,
        detail: passed
          ? 'TXT record found'
          : `${records.length} TXT record(s) on ${site.domain}, none with the token`,
      };
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'error';
      return { method: 'dns', passed: false, detail: `TXT lookup for ${site.domain} failed (${code})` };
    }
  }

  #find(db: Kysely<Database>, accountId: string, domain: string): Promise<SiteRow | undefined> {
    return db
      .selectFrom('sites')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('domain', '=', domain)
      .executeTakeFirst();
  }
}

async function readAtMost(res: Response | import('undici').Response, limit: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { name?: string; code?: string } }).cause;
  if (cause?.name === 'BlockedDestinationError') return 'the address is not public';
  return cause?.code ?? (err as Error).name ?? 'error';
}
