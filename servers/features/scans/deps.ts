/** What the scan service's parts (requests, reads, runner, worker) are built from. */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AnonymousSessions } from '../../../auth/anonymous/sessions.ts';
import type { Dialect } from '../../../db/database.ts';
import type { Database } from '../../../db/schema.ts';
import type { Config } from '../../config.ts';
import type { BrowserPool } from '../../outbound/browser-pool.ts';
import type { SafeFetch } from '../../outbound/safe-fetch.ts';
import type { LiveTrafficProvider } from './scoring.ts';

export interface ScansDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  config: Config;
  log: Logger;
  /** SSRF-safe fetch with the scanner's address policy (`scanner.allow_private_networks`, `localSitesAllowed`). */
  fetch: SafeFetch;
  /** Headless Chromium for the WebMCP check (`scanner.webmcp.enabled`); null: not measured. */
  browser?: BrowserPool | null;
  /** Live traffic of a domain with the pixel; the sites feature provides it. */
  traffic: LiveTrafficProvider;
  /** Counts scans of anonymous sessions against their quota. */
  anonymous: Pick<AnonymousSessions, 'reserveScan'>;
  now: () => Date;
}
