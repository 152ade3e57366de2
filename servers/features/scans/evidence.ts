/**
 * Evidence: every request a scan makes is recorded (method, URL, status, the headers a judgement
 * reads, the start of the body, how long it took) under a topic, and each check of docs/reference/scoring.md
 * names the topics its judgement rests on, so a result shows the requests behind every score.
 */

export interface RequestEvidence {
  /** What the request was for (`robots`, `llms_txt`, `mcp`, `oauth`, `door` ...). */
  topic: string;
  method: string;
  url: string;
  /** null when no answer came (timeout, refused, blocked destination). */
  status: number | null;
  /** The answer's headers that judgements read (content type, Vary, Link, WWW-Authenticate ...). */
  headers: Record<string, string>;
  /** The first characters of the body, white space collapsed. */
  body_preview: string | null;
  duration_ms: number;
  error: string | null;
  /** The User-Agent sent when it was not the scanner's own (the door test). */
  user_agent?: string;
}

/** Answer headers kept as evidence; the rest are dropped. */
export const evidenceHeaders = [
  'content-type',
  'content-length',
  'location',
  'vary',
  'link',
  'x-robots-tag',
  'www-authenticate',
  'payment-required',
  'retry-after',
  'mcp-session-id',
] as const;

const PREVIEW_CHARS = 200;

/** The headers judgements read, whole. */
export function keptHeaders(headers: { get(name: string): string | null }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of evidenceHeaders) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/** The same headers as evidence keeps them: long values cut. */
export function evidenceOfHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, v.length > 300 ? `${v.slice(0, 300)}...` : v]),
  );
}

export function bodyPreview(body: string): string | null {
  const text = body.replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}...` : text;
}

/** Requests kept per topic (pages and links can be many) and in all. */
const PER_TOPIC = 12;
const TOTAL = 250;

/** Collects a scan's requests within the caps above. */
export class EvidenceLog {
  readonly requests: RequestEvidence[] = [];
  private readonly perTopic = new Map<string, number>();

  add(entry: RequestEvidence): void {
    const n = this.perTopic.get(entry.topic) ?? 0;
    if (n >= PER_TOPIC || this.requests.length >= TOTAL) return;
    this.perTopic.set(entry.topic, n + 1);
    this.requests.push({ ...entry, headers: evidenceOfHeaders(entry.headers) });
  }
}

/** The recorded requests of these topics, in the order they were made. */
export function evidenceOf(
  requests: readonly RequestEvidence[] | undefined,
  topics: readonly string[],
): RequestEvidence[] {
  if (!requests) return [];
  return requests.filter((r) => topics.includes(r.topic));
}
