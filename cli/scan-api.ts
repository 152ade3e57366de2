/**
 * A scan through the service's public API, as any client makes one: `POST {api}/scans` (public by
 * default; rate limited per address without a key), then `GET {api}/scans/{id}` until the scan is
 * done or failed. `AGENT_SERVICE_KEY` is sent as `x-service-key` when set: the scan is then the
 * account's (no per-address limit) and may be private (docs/guides/site-owners/scans.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scan } from '../servers/features/scans/schemas.ts';
import type { DoneScan } from './gate.ts';
import { CliFailure } from './options.ts';

const POLL_INTERVAL_MS = 1000;

export interface ApiScanRequest {
  api: string;
  target: string;
  profile: string | null;
  private: boolean;
  serviceKey: string | null;
  deadline: AbortSignal;
  /** Progress lines for stderr (the report goes to stdout). */
  progress: (line: string) => void;
}

export async function scanThroughApi(request: ApiScanRequest): Promise<DoneScan> {
  const { api, deadline } = request;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (request.serviceKey) headers['x-service-key'] = request.serviceKey;
  const body = {
    domain: request.target,
    public: !request.private,
    ...(request.profile ? { profile: request.profile } : {}),
  };
  const started = await call(api, `${api}/scans`, deadline, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (started.status === 400) throw new CliFailure(2, `${api} refused the scan: ${await problemOf(started)}`);
  if (started.status !== 202 && started.status !== 200)
    throw new CliFailure(3, `${api}/scans answered ${started.status}: ${await problemOf(started)}`);
  let scan = (await started.json()) as Scan;
  request.progress(`scan ${scan.scan_id} of ${scan.domain}: ${scan.status_url}`);
  // The status URL carries the profile asked for, so the result read back is scored as it.
  const statusUrl = `${api}/scans/${scan.scan_id}${request.profile ? `?profile=${request.profile}` : ''}`;
  let said = '';
  while (scan.status === 'queued' || scan.status === 'running') {
    await sleep(POLL_INTERVAL_MS, undefined, { signal: deadline }).catch(() => {});
    const res = await call(api, statusUrl, deadline, { headers }, scan.status_url);
    if (res.status >= 500) continue;
    if (res.status !== 200)
      throw new CliFailure(3, `${statusUrl} answered ${res.status}: ${await problemOf(res)}`);
    scan = (await res.json()) as Scan;
    const line = `${scan.status}: ${scan.progress.message ?? scan.progress.phase ?? ''} (${scan.progress.done}/${scan.progress.total})`;
    if (line !== said) request.progress(line);
    said = line;
  }
  if (scan.status === 'failed' || !scan.result)
    throw new CliFailure(3, `the scan of ${scan.domain} failed: ${scan.error ?? 'no reason given'}`);
  return scan as DoneScan;
}

/**
 * One request within the run's deadline; no answer at all (refused, reset, DNS, the deadline) is a
 * scan that could not run. `following` names where a scan already started can still be read.
 */
async function call(
  api: string,
  url: string,
  deadline: AbortSignal,
  init: RequestInit,
  following?: string,
): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: deadline });
  } catch (err) {
    if (deadline.aborted)
      throw new CliFailure(
        3,
        `timed out (--timeout)${following ? `; the scan goes on, read it later at ${following}` : ''}`,
      );
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliFailure(
      3,
      `no answer from ${api} (${cause?.code ?? cause?.message ?? (err as Error).message})`,
    );
  }
}

/** The RFC 9457 problem's detail (or title), or the status text: never a whole HTML error page. */
async function problemOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const problem = JSON.parse(text) as {
      detail?: string;
      title?: string;
      code?: string;
      errors?: { field: string; message: string }[];
    };
    const fields = (problem.errors ?? []).map((e) => `${e.field}: ${e.message}`);
    const said = fields.length ? fields.join('; ') : (problem.detail ?? problem.title);
    if (said) return problem.code ? `${said} (${problem.code})` : said;
  } catch {
    // not a problem document
  }
  return res.statusText || `HTTP ${res.status}`;
}
