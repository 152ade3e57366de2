/**
 * Per-request reply addresses: `returns+<request id>.<token>@<inbound domain>`, the `Reply-To` and
 * envelope sender of every mail the service sends a brand about a request, so the brand's replies
 * and bounces come back to the request (`listener.ts`).
 *
 * The token is derived, not stored: the first 80 bits of HMAC-SHA256(key, request id) in lowercase
 * base32 (16 characters; mail systems may change the case of a local part). The key is a service
 * secret (`inbound_reply_key`, made on first use, sealed at rest with `SECRETS_KEY`, shared by every
 * process on the database). Guessing a token for a known request id over SMTP takes 2^79 tries on
 * average; comparison is in constant time. The whole local part stays within RFC 5321's 64 octets
 * (8 + 36 + 1 + 16 = 61).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const LOCAL_PREFIX = 'returns+';
const TOKEN_BYTES = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** RFC 4648 base32, lowercase, without padding (10 bytes -> 16 characters). */
function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export class ReplyAddresses {
  readonly domain: string;
  readonly #key: Buffer;

  /** `key`: the service secret `inbound_reply_key`; `domain`: `returns.inbound_mail.domain`. */
  constructor(key: string, domain: string) {
    this.#key = Buffer.from(key, 'utf8');
    this.domain = domain.toLowerCase();
  }

  #token(requestId: string): string {
    const mac = createHmac('sha256', this.#key).update(`reply-address:${requestId}`).digest();
    return base32(mac.subarray(0, TOKEN_BYTES));
  }

  /** The request's reply address. */
  addressOf(requestId: string): string {
    return `${LOCAL_PREFIX}${requestId}.${this.#token(requestId)}@${this.domain}`;
  }

  /**
   * The request an address belongs to, or null: another domain or form, or a token that is not
   * this request's (compared in constant time).
   */
  requestOf(address: string): string | null {
    const at = address.lastIndexOf('@');
    if (at < 0) return null;
    const local = address.slice(0, at).toLowerCase();
    const domain = address
      .slice(at + 1)
      .toLowerCase()
      .replace(/\.$/, '');
    if (domain !== this.domain || !local.startsWith(LOCAL_PREFIX)) return null;
    const rest = local.slice(LOCAL_PREFIX.length);
    const dot = rest.lastIndexOf('.');
    const requestId = rest.slice(0, dot);
    const token = Buffer.from(rest.slice(dot + 1));
    if (dot < 0 || !UUID.test(requestId)) return null;
    const expected = Buffer.from(this.#token(requestId));
    if (token.length !== expected.length || !timingSafeEqual(token, expected)) return null;
    return requestId;
  }
}
