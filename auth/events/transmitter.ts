/**
 * Our transmitter (SSF 1.0, CAEP 1.0): when an account revokes all its tokens, changes its password
 * or changes its email, a SET about it is signed with the authorization server's signing key
 * (`keys.ts`, published at `{auth_url}/oauth/jwks`) and queued for each of the account's streams
 * that asked for that event, in the transaction of the change itself; the outbox worker
 * (`outbox.ts`) pushes it. The SET names the account as `iss_sub` (our issuer and the `sub` of
 * our tokens).
 */
import { randomUUID } from 'node:crypto';
import { type CryptoKey, importJWK, SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import { newOutboxRow } from '../../db/leases.ts';
import type { Database, SsfStreamRow } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import type { SigningJwk } from '../keys.ts';
import { type CaepEventType, PUSH_DELIVERY_METHOD, SET_TYP, VERIFICATION_EVENT } from './set.ts';
import { eventsDelivered, streamAudience } from './streams.ts';
import { accountSubject } from './subjects.ts';

export const SSF_CONFIGURATION_PATH = '/.well-known/ssf-configuration';

/** Where the transmitter's endpoints are, under the issuer. */
export const ssfEndpoints = (config: Config) => ({
  push: `${config.auth_url}/ssf/push`,
  streams: `${config.auth_url}/ssf/streams`,
  status: `${config.auth_url}/ssf/status`,
  verify: `${config.auth_url}/ssf/verify`,
});

/** SSF 1.0 section 7.1: Transmitter Configuration Metadata. */
export function ssfConfiguration(config: Config) {
  const endpoints = ssfEndpoints(config);
  return {
    spec_version: '1_0',
    issuer: config.auth_url,
    jwks_uri: `${config.auth_url}/oauth/jwks`,
    delivery_methods_supported: [PUSH_DELIVERY_METHOD],
    configuration_endpoint: endpoints.streams,
    status_endpoint: endpoints.status,
    verification_endpoint: endpoints.verify,
    // Stream management takes an access token of ours (RFC 6749/6750) or a service key.
    authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }, { spec_urn: 'urn:ietf:rfc:6750' }],
    // A stream carries events about the account that created it, without adding subjects.
    default_subjects: 'ALL',
  };
}

export interface TransmitterDeps {
  config: Config;
  /** The authorization server's signing key (private JWK, the unretired one). */
  signingKey: SigningJwk;
  now: () => Date;
  /** Called after a transaction that queued SETs commits, so the worker looks at once. */
  nudge: () => void;
}

export class SecurityEventTransmitter {
  readonly #deps: TransmitterDeps;
  #key: Promise<CryptoKey | Uint8Array> | undefined;

  constructor(deps: TransmitterDeps) {
    this.#deps = deps;
  }

  get issuer(): string {
    return this.#deps.config.auth_url;
  }

  /** The worker was told to look for new SETs (after the caller's transaction committed). */
  queued(): void {
    this.#deps.nudge();
  }

  async #sign(
    stream: SsfStreamRow,
    jti: string,
    subject: object,
    type: string,
    event: object,
  ): Promise<string> {
    const { signingKey } = this.#deps;
    this.#key ??= importJWK(signingKey, signingKey.alg);
    return new SignJWT({ sub_id: subject, events: { [type]: event } })
      .setProtectedHeader({ alg: signingKey.alg, kid: signingKey.kid, typ: SET_TYP })
      .setIssuer(this.issuer)
      .setAudience(streamAudience(stream))
      .setJti(jti)
      .setIssuedAt(Math.floor(this.#deps.now().getTime() / 1000))
      .sign(await this.#key);
  }

  async #enqueue(trx: Kysely<Database>, stream: SsfStreamRow, type: string, token: string, jti: string) {
    const at = this.#deps.now().toISOString();
    await trx
      .insertInto('ssf_deliveries')
      .values({
        id: jti,
        stream_id: stream.id,
        event_type: type,
        token,
        ...newOutboxRow(at),
      })
      .execute();
  }

  /**
   * Queues a SET of `type` about the account for each of its streams that is not disabled and
   * asked for the type; returns how many. Run inside the transaction of the change.
   */
  async emit(
    trx: Kysely<Database>,
    accountId: string,
    type: CaepEventType,
    event: Record<string, unknown>,
  ): Promise<number> {
    const streams = await trx
      .selectFrom('ssf_streams')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('status', '!=', 'disabled')
      .execute();
    const payload = { event_timestamp: Math.floor(this.#deps.now().getTime() / 1000), ...event };
    let queued = 0;
    for (const stream of streams) {
      if (!eventsDelivered(stream).includes(type)) continue;
      const jti = randomUUID();
      const token = await this.#sign(stream, jti, accountSubject(this.issuer, accountId), type, payload);
      await this.#enqueue(trx, stream, type, token, jti);
      queued += 1;
    }
    return queued;
  }

  /** SSF 1.0 section 8.1.4: a verification event on the stream, with the receiver's `state`. */
  async verify(db: Kysely<Database>, stream: SsfStreamRow, state: string | undefined): Promise<void> {
    const jti = randomUUID();
    const token = await this.#sign(
      stream,
      jti,
      { format: 'opaque', id: stream.id },
      VERIFICATION_EVENT,
      state === undefined ? {} : { state },
    );
    await this.#enqueue(db, stream, VERIFICATION_EVENT, token, jti);
    this.queued();
  }
}
