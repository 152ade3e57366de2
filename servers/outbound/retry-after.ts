/**
 * `Retry-After` (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date, as milliseconds from
 * `now`; undefined when absent or unreadable. Shared by everything that calls out and retries: the
 * outbox's deliveries and the scanner's door test.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}
