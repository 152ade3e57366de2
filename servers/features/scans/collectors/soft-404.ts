/**
 * Soft 404s: a site that answers a path it does not have with 2xx instead of 404 (RFC 9110
 * section 15.5.5), typically a single-page app whose host serves the same HTML shell for every
 * path, or an API gateway with a catch-all JSON answer. Such a site seems to "have" every
 * document an agent looks for. The crawler asks for a made-up path under `/.well-known/` first;
 * an answer to a real document's path that is the same as that one proves nothing, and earns
 * no credit.
 *
 * "The same" is judged on a fingerprint: status, media type, and the body with the requested URL
 * and path taken out (catch-alls often echo them), compared byte for byte through SHA-256. A JSON
 * object answer also keeps its shape (its sorted member names), so a catch-all that adds a fresh
 * request id or timestamp to every answer is still recognised.
 */
import { createHash } from 'node:crypto';

/** What was fetched for one probe, as the judgements need it (`url` is the final URL). */
export interface Fetched {
  url: string;
  status: number;
  content_type: string | null;
  body: string;
}

export interface AnswerFingerprint {
  status: number;
  /** Media type without parameters, lower case. */
  media_type: string | null;
  /** Length and SHA-256 (hex) of the body after the URL and path were taken out of it. */
  bytes: number;
  sha256: string;
  /** Sorted member names when the body is a JSON object. */
  json_members: string[] | null;
}

/** The site's answer to a made-up path, as stored with the scan. */
export interface UnknownPathAnswer extends AnswerFingerprint {
  url: string;
  /** It answered 2xx: the site answers unknown paths as if they existed. */
  soft_404: boolean;
  /** Documents whose answer was the same as this one, so were not credited. */
  same_answer: string[];
}

export function mediaType(contentType: string | null): string | null {
  return contentType?.split(';')[0]?.trim().toLowerCase() || null;
}

export function fingerprintOf(fetched: Fetched): AnswerFingerprint {
  let body = fetched.body;
  let echoes: string[] = [];
  try {
    const url = new URL(fetched.url);
    echoes = [url.href, url.pathname + url.search, url.pathname].filter((e) => e.length > 1);
  } catch {
    // Not a URL: nothing to take out.
  }
  for (const echo of echoes) body = body.split(echo).join('');
  const bytes = Buffer.from(body, 'utf8');
  return {
    status: fetched.status,
    media_type: mediaType(fetched.content_type),
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    json_members: jsonMembers(fetched.body),
  };
}

/**
 * The answer is the same as the site's answer to a made-up path, which was 2xx: it is a soft 404,
 * not a document. False when the site answers unknown paths properly (or the probe failed).
 */
export function answersLikeUnknownPath(fetched: Fetched, unknown: AnswerFingerprint | null): boolean {
  if (!unknown || unknown.status < 200 || unknown.status >= 300) return false;
  const answer = fingerprintOf(fetched);
  if (answer.status !== unknown.status || answer.media_type !== unknown.media_type) return false;
  if (answer.sha256 === unknown.sha256) return true;
  return (
    answer.json_members !== null &&
    unknown.json_members !== null &&
    answer.json_members.join('\n') === unknown.json_members.join('\n')
  );
}

const htmlMediaTypes = new Set(['text/html', 'application/xhtml+xml']);
/** An HTML document's start: a doctype or `<html>`, after a BOM, white space and comments. */
const htmlStart = /^\uFEFF?\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html)[\s>]/i;

/**
 * Labelled HTML, or an HTML document whatever the label says: an app shell, an error page or a
 * login page, never a robots.txt, llms.txt or JSON discovery document.
 */
export function isHtmlAnswer(fetched: Pick<Fetched, 'content_type' | 'body'>): boolean {
  const type = mediaType(fetched.content_type);
  return (type !== null && htmlMediaTypes.has(type)) || htmlStart.test(fetched.body);
}

function jsonMembers(body: string): string[] | null {
  if (!/^\s*\{/.test(body)) return null;
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : null;
  } catch {
    return null;
  }
}
