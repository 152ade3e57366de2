/**
 * `--local`: the scanner in this process - the service's crawler and scoring, with its SSRF-safe
 * fetch and its settings (`mcp.config.json` and the `SCAN_*` environment), and no database. What
 * only a service knows is absent: Live AI Traffic (the pixel) has no data and its weight is
 * renormalized away, and there is no previous scan for the score trend.
 *
 * A local name (`localhost:3000`, `127.0.0.1:8080`: a preview build the CI job started) is allowed
 * here, since whoever runs the command chose it; loopback is then the only private address the
 * fetch may reach. Any other private network stays closed unless `SCAN_ALLOW_PRIVATE=1`.
 */
import { randomUUID } from 'node:crypto';
import { type Config, ConfigError, loadConfig } from '../servers/config.ts';
import { CrawlError, crawlSite } from '../servers/features/scans/crawler.ts';
import { summarize } from '../servers/features/scans/reads.ts';
import { limitsFor, schemesOf } from '../servers/features/scans/runner.ts';
import { type ProfileId, scoreSite } from '../servers/features/scans/scoring.ts';
import { outboundResolver } from '../servers/outbound/dns-lookup.ts';
import { createSafeFetch } from '../servers/outbound/safe-fetch.ts';
import { isLocalDomain, normalizeDomain } from '../servers/public-address.ts';
import type { DoneScan } from './gate.ts';
import { CliFailure } from './options.ts';

export interface LocalScanRequest {
  target: string;
  profile: ProfileId | null;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  progress: (line: string) => void;
}

/** The service's settings, read as the service reads them, but never in production mode: this is not a deployment. */
function scannerConfig(env: NodeJS.ProcessEnv): Config {
  try {
    return loadConfig({ env, overrides: { mode: 'development' } });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliFailure(2, err.message);
    throw err;
  }
}

export async function scanInProcess(request: LocalScanRequest): Promise<DoneScan> {
  const config = scannerConfig(request.env);
  const normalized = normalizeDomain(request.target, { allowLocal: true });
  if (!normalized.ok) throw new CliFailure(2, `cannot scan "${request.target}": ${normalized.message}`);
  const domain = normalized.domain;
  const fetch = createSafeFetch({
    allowPrivateNetworks: config.scanner.allow_private_networks,
    allowLoopback: isLocalDomain(domain),
    timeoutMs: config.outbound.timeout_ms,
    userAgent: config.outbound.user_agent,
    lookup: outboundResolver(config.outbound.dns_servers).lookup,
  });
  const limits = limitsFor({ config }, 'full');
  const requestedAt = new Date().toISOString();
  let said = '';
  try {
    const facts = await crawlSite({
      domain,
      fetch,
      userAgent: config.scanner.user_agent,
      limits: { ...limits, scan_timeout_ms: Math.min(limits.scan_timeout_ms, request.timeoutMs) },
      schemes: schemesOf(domain),
      onProgress: (p) => {
        if (p.phase !== said) request.progress(`${p.phase}: ${p.message ?? ''}`);
        said = p.phase;
      },
    });
    const result = scoreSite(facts, null, null, { profile: request.profile });
    const requests = facts.requests?.length ?? 0;
    const finishedAt = new Date().toISOString();
    return {
      scan_id: randomUUID(),
      domain,
      public: false,
      depth: 'full',
      status: 'done',
      progress: { phase: 'done', done: requests, total: requests, message: null },
      requested_at: requestedAt,
      started_at: requestedAt,
      finished_at: finishedAt,
      error: null,
      // Nothing to follow: the scan lives only in this process.
      status_url: '',
      result: { ...result, site: summarize(facts) },
    };
  } catch (err) {
    if (err instanceof CrawlError) throw new CliFailure(3, `could not scan ${domain}: ${err.message}`);
    throw err;
  } finally {
    await fetch.close();
  }
}
