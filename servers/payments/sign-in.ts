/**
 * x402 sign-in-with-x (x402 specs/extensions/sign-in-with-x.md, CAIP-122): the wallet that paid for
 * something readable later (a private scan, an embodiment booking, a boost campaign) reads it again
 * by signing a message, beside the bearer link its purchase answered.
 *
 * A read that needs the wallet answers 402 with the challenge in `extensions["sign-in-with-x"]` of
 * PAYMENT-REQUIRED (and `accepts: []`: nothing is for sale there - the reference server's
 * auth-only route). The client signs it and sends the proof as the `SIGN-IN-WITH-X` header (base64
 * JSON) or, over MCP, in `params._meta["x402/sign-in-with-x"]` (the header's value or its JSON).
 *
 * The challenge, the parsing, the field checks and the signature are `@x402/extensions`'s
 * reference code. Two things are this service's, where the reference hooks do not fit several
 * processes: who paid is read from the payments ledger (a delivered payment for that very
 * resource), and a message's nonce is spent by inserting it (`siwx_nonces`), so one message reads
 * once in whichever process gets it first - the reference's check-then-record is a race across
 * processes. A message names one resource (its `uri`): a signature made for one scan reads no other.
 */
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxExtension,
  type SIWxPayload,
  SIWxPayloadSchema,
  validateSIWxMessage,
  verifySIWxSignature,
} from '@x402/extensions/sign-in-with-x';
import type { Kysely } from 'kysely';
import type { Database, PaymentRow } from '../../db/schema.ts';
import type { Config } from '../config.ts';
import { type ErrorCode, ServiceError } from '../errors.ts';
import { networkOf } from './networks.ts';
import type { PaymentReceipt } from './schemas.ts';

export { SIGN_IN_WITH_X };

/** The request header of the proof (x402 specs/extensions/sign-in-with-x.md, "Client Request"). */
export const SIGN_IN_HEADER = 'SIGN-IN-WITH-X';
/** Where an MCP tools/call carries the proof, beside `x402/payment` (the x402 MCP clients' key). */
export const SIGN_IN_META = 'x402/sign-in-with-x';

/**
 * How long a challenge may be signed and its message used, in seconds: x402's default for both
 * (`expirationTime` 5 minutes after `issuedAt`; `validateSIWxMessage` refuses older messages).
 */
const MESSAGE_TTL_S = 300;

/** The payment statuses in which what was bought was delivered to its payer. */
export const DELIVERED_PAYMENT_STATUSES: readonly PaymentRow['status'][] = [
  'authorized',
  'settled',
  'reconciling',
];

/** The proof as an adapter received it: the header's value, or the MCP `_meta` entry. */
export interface SignInProof {
  transport: 'http' | 'mcp';
  value: unknown;
}

/** Something a wallet paid for, as a read that accepts sign-in-with-x sees it. */
export interface PaidResource {
  /** Its canonical URL (no query): the challenge's `uri`, and the only one a message may name. */
  url: string;
  /** What it is, for the challenge's statement ("your private scan of example.com"). */
  description: string;
  /** Lower-case addresses of the wallets whose payment for it was delivered. */
  payers: readonly string[];
}

export interface SignInDeps {
  db: Kysely<Database>;
  config: Config;
  now: () => Date;
}

/** A refusal of a proof, with the reason code x402's reference uses (`SIWxErrorCode`) or ours. */
interface Refused {
  reason: string;
  message: string;
}

export class SignInWithX {
  readonly #deps: SignInDeps;
  /** The reference server extension per origin, for its challenge (`enrichPaymentRequiredResponse`). */
  readonly #servers = new Map<string, ReturnType<typeof createSIWxResourceServerExtension>>();

  constructor(deps: SignInDeps) {
    this.#deps = deps;
  }

  /**
   * A fresh challenge for `url` as the reference server builds it (domain and uri from the
   * configured origin of `url`, a random nonce, issuedAt, expirationTime, the configured network).
   */
  async challengeFor(url: string, statement: string): Promise<SIWxExtension> {
    const origin = new URL(url).origin;
    let server = this.#servers.get(origin);
    if (!server) {
      // Only the challenge is taken from the reference extension: its hooks keep payers by path
      // and nonces in memory, which several processes cannot share (see the file comment).
      server = createSIWxResourceServerExtension({
        origin,
        storage: { hasPaid: () => false, recordPayment: () => undefined },
      });
      this.#servers.set(origin, server);
    }
    const declaration = declareSIWxExtension({
      statement,
      network: networkOf(this.#deps.config).caip2,
      expirationSeconds: MESSAGE_TTL_S,
    })[SIGN_IN_WITH_X];
    const resourceInfo = { url, description: statement, mimeType: 'application/json' };
    const requirements: PaymentRequirements[] = [];
    return (await server.enrichPaymentRequiredResponse?.(declaration, {
      requirements,
      resourceInfo,
      paymentRequiredResponse: { x402Version: 2, resource: resourceInfo, accepts: requirements },
    })) as SIWxExtension;
  }

  /**
   * The 402 that asks for the paying wallet: the challenge in PAYMENT-REQUIRED (`accepts: []`) and
   * in the problem body's `extensions`, over MCP in the isError result's PaymentRequired.
   */
  async challenge(
    resource: Pick<PaidResource, 'url' | 'description'>,
    code: Extract<ErrorCode, 'sign_in_required' | 'sign_in_invalid'> = 'sign_in_required',
    refused?: Refused,
  ): Promise<ServiceError> {
    const statement = `Sign in with the wallet that paid to read ${resource.description}`;
    const extensions = { [SIGN_IN_WITH_X]: await this.challengeFor(resource.url, statement) };
    const required: PaymentRequired = {
      x402Version: 2,
      error: refused?.reason ?? 'sign_in_required',
      resource: { url: resource.url, description: resource.description, mimeType: 'application/json' },
      accepts: [],
      extensions,
    };
    return new ServiceError(code, {
      detail: refused
        ? `${SIGN_IN_HEADER} refused (${refused.reason}): ${refused.message}. Sign the new challenge`
        : `${resource.description} is read with the link its purchase answered, or by the wallet that ` +
          `paid: sign the challenge of extensions["${SIGN_IN_WITH_X}"] and send it as the ` +
          `${SIGN_IN_HEADER} header (MCP: _meta["${SIGN_IN_META}"])`,
      extensions: { extensions },
      payment: { required: required as unknown as Record<string, unknown> },
    });
  }

  /**
   * The wallet signed in with `proof`, which paid for `resource`; its nonce is spent. Throws the
   * challenge (402 `sign_in_required`) without a proof, a fresh one (402 `sign_in_invalid`) for a
   * proof that cannot sign in, and 403 `sign_in_not_payer` for a valid one by another wallet.
   */
  async payerOf(proof: SignInProof | undefined, resource: PaidResource): Promise<string> {
    if (proof === undefined) throw await this.challenge(resource);
    const checked = await this.#check(proof, resource);
    if ('reason' in checked) throw await this.challenge(resource, 'sign_in_invalid', checked);
    const address = checked.address.toLowerCase();
    if (!resource.payers.includes(address)) {
      throw new ServiceError('sign_in_not_payer', {
        detail: `Signed in as ${checked.address}, which did not pay for ${resource.description}; sign in with the paying wallet`,
      });
    }
    if (!(await this.#spend(checked.payload, address))) {
      throw await this.challenge(resource, 'sign_in_invalid', {
        reason: 'invalid_siwx_nonce',
        message: 'this message was already used (each nonce signs in once)',
      });
    }
    return address;
  }

  /**
   * A read of something a wallet may have paid for. With a proof (and no bearer link), as the
   * wallet it signs in, when a delivered payment paid for it (`paid`). Otherwise as the caller is
   * (`read(null)`); when that is refused 404, no link was sent and a wallet paid for it, the answer
   * is the challenge instead. A wrong link stays 404, as before.
   */
  async read<T>(
    proof: SignInProof | undefined,
    how: {
      /** Whether the request sent the bearer link's token: then it is read with that alone. */
      linkGiven: boolean;
      paid: () => Promise<PaidResource | undefined>;
      read: (payer: string | null) => Promise<T>;
    },
  ): Promise<T> {
    if (proof !== undefined && !how.linkGiven) {
      const resource = await how.paid();
      return how.read(resource ? await this.payerOf(proof, resource) : null);
    }
    try {
      return await how.read(null);
    } catch (err) {
      if (how.linkGiven || !(err instanceof ServiceError) || err.code !== 'not_found') throw err;
      const resource = await how.paid();
      if (!resource) throw err;
      throw await this.challenge(resource);
    }
  }

  /** The proof's message, checked as x402's reference checks it and bound to `resource`. */
  async #check(
    proof: SignInProof,
    resource: PaidResource,
  ): Promise<{ payload: SIWxPayload; address: string } | Refused> {
    const payload = parseProof(proof);
    if ('reason' in payload) return payload;
    const expected = new URL(resource.url);
    const validation = await validateSIWxMessage(payload, new URL(expected.origin), {
      maxAge: MESSAGE_TTL_S * 1000,
    });
    if (!validation.isValid) return { reason: validation.invalidReason, message: validation.invalidMessage };
    const named = new URL(payload.uri);
    if (named.pathname !== expected.pathname) {
      return {
        reason: 'invalid_siwx_uri_mismatch',
        message: `the message names ${named.pathname}, not ${expected.pathname}`,
      };
    }
    const network = networkOf(this.#deps.config).caip2;
    if (payload.chainId !== network) {
      return {
        reason: 'invalid_siwx_unsupported_chain',
        message: `chainId ${payload.chainId} is not ${network}`,
      };
    }
    let verified: Awaited<ReturnType<typeof verifySIWxSignature>>;
    try {
      verified = await verifySIWxSignature(payload);
    } catch {
      // The reference formats the EIP-4361 message before its own try: fields SIWE refuses throw.
      return { reason: 'invalid_siwx_signature', message: 'the message is not a valid EIP-4361 message' };
    }
    if (!verified.isValid) return { reason: verified.invalidReason, message: verified.invalidMessage };
    return { payload, address: verified.payer };
  }

  /**
   * Spends the message's nonce: true when this call inserted it, false when it was used before.
   * Kept until the message could no longer be accepted for its age; older ones are deleted here.
   */
  async #spend(payload: SIWxPayload, address: string): Promise<boolean> {
    const now = this.#deps.now();
    const issued = Date.parse(payload.issuedAt);
    const expires = new Date(Math.max(issued, now.getTime()) + MESSAGE_TTL_S * 1000 + 60_000);
    const { db } = this.#deps;
    await db.deleteFrom('siwx_nonces').where('expires_at', '<', now.toISOString()).execute();
    const inserted = await db
      .insertInto('siwx_nonces')
      .values({
        nonce: payload.nonce,
        address,
        used_at: now.toISOString(),
        expires_at: expires.toISOString(),
      })
      .onConflict((oc) => oc.column('nonce').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /**
   * What a paid SKU's receipt says about signing in later: the paying wallet and the chain it signs
   * on (x402 SettlementResponse `extensions`), for the SKUs whose result is read again.
   */
  receiptWithSignIn(receipt: PaymentReceipt, readLater: string | undefined): PaymentReceipt {
    if (!readLater) return receipt;
    return {
      ...receipt,
      extensions: {
        [SIGN_IN_WITH_X]: {
          address: receipt.payer,
          supportedChains: [{ chainId: networkOf(this.#deps.config).caip2, type: 'eip191' }],
          statement: `This wallet reads ${readLater} again by signing in (${SIGN_IN_HEADER}) at its status_url`,
        },
      },
    };
  }
}

/** The proof's payload: the header's base64 JSON, or over MCP that value or the JSON itself. */
function parseProof(proof: SignInProof): SIWxPayload | Refused {
  if (typeof proof.value === 'string') {
    try {
      return parseSIWxHeader(proof.value);
    } catch (err) {
      return { reason: 'invalid_siwx_payload', message: (err as Error).message };
    }
  }
  if (proof.transport === 'mcp') {
    const parsed = SIWxPayloadSchema.safeParse(proof.value);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join(', ');
    return { reason: 'invalid_siwx_payload', message: `_meta["${SIGN_IN_META}"]: ${issues}` };
  }
  return { reason: 'invalid_siwx_payload', message: `${SIGN_IN_HEADER} is not base64 JSON` };
}

/** The request header of a read that takes sign-in-with-x, as OpenAPI documents it (`HttpBinding.headers`). */
export const signInHeader = {
  name: SIGN_IN_HEADER,
  description:
    'x402 sign-in-with-x: base64 JSON of the CAIP-122 message (EIP-4361 for EVM) signed by the wallet that ' +
    'paid, for the challenge of a 402 sign_in_required (PAYMENT-REQUIRED extensions["sign-in-with-x"]). ' +
    'Each message reads once; it names this resource (uri) and is valid 5 minutes.',
  maxLength: 8192,
};

/** The error codes of a read that takes sign-in-with-x. */
export const signInErrors = ['sign_in_required', 'sign_in_invalid', 'sign_in_not_payer'] as const;
