/**
 * What every server-rendered form of the authorization server shares: anti-forgery tokens bound to
 * what the form acts on (an HMAC under the cookie key, compared in constant time), and headers that
 * keep its pages out of caches and frames.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { ServiceError } from '../servers/errors.ts';
import { nulFields } from '../servers/input.ts';
import { messagePage } from './interactions/pages.ts';

/** The anti-forgery token of a form acting on `context` (an interaction id, a claim). */
export function csrfToken(key: string, context: string): string {
  return createHmac('sha256', key).update(context).digest('base64url');
}

export function csrfMatches(key: string, context: string, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfToken(key, context));
  const got = Buffer.from(sent);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** No caching, no framing (clickjacking of the consent and claim buttons). */
export function noStore(res: Response): Response {
  return res.set({
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "frame-ancestors 'none'",
  });
}

/**
 * Answers 400 with an error page when a form or query field holds a NUL character (PostgreSQL
 * cannot store it: `servers/input.ts`); returns whether it did.
 */
export function refusedNul(res: Response, fields: unknown): boolean {
  const found = nulFields(fields);
  if (found.length === 0) return false;
  noStore(res)
    .status(400)
    .type('html')
    .send(messagePage('Request refused', `${found.map((f) => f.field).join(', ')}: ${found[0]?.message}.`));
  return true;
}

/**
 * A form refused by a limit (`rate_limited` 429, or `service_unavailable` 503 when the password
 * hashing queue is full) answered as a page with its Retry-After. False for any other error,
 * which the caller rethrows.
 */
export function sendLimitPage(res: Response, err: unknown): boolean {
  if (!(err instanceof ServiceError) || (err.code !== 'rate_limited' && err.code !== 'service_unavailable'))
    return false;
  const title = err.code === 'rate_limited' ? 'Too many attempts' : 'Busy, try again shortly';
  noStore(res).status(err.status).set(err.headers).type('html').send(messagePage(title, err.publicDetail));
  return true;
}

/** A cookie of the request (no cookie parser runs here): the first pair of that name (RFC 6265 section 5.4). */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // not percent-encoding the service set (RFC 6265 section 4.1.1): no cookie
      }
    }
  }
  return undefined;
}
