/**
 * Security Event Tokens (RFC 8417) as the Shared Signals Framework 1.0 profiles them: a JWT of
 * type `secevent+jwt` with `iss`, `jti`, `iat`, `aud`, `sub_id` and exactly one event in `events`,
 * and no `sub` or `exp` (SSF 1.0 section 4.1). Used by the receiver and the transmitter alike.
 */
import { CAEP_EVENT_TYPES } from '../../servers/config.ts';

export { CAEP_EVENT_TYPES };
export type CaepEventType = (typeof CAEP_EVENT_TYPES)[number];

/** RFC 8417 section 2.3 (`typ` of the JWS header) and RFC 8935 section 2 (the request's content type). */
export const SET_TYP = 'secevent+jwt';
export const SET_MEDIA_TYPE = 'application/secevent+jwt';

/** RFC 8935 delivery method URN (SSF 1.0 section 6.1.1). */
export const PUSH_DELIVERY_METHOD = 'urn:ietf:rfc:8935';

export const SESSION_REVOKED = CAEP_EVENT_TYPES[0];
export const CREDENTIAL_CHANGE = CAEP_EVENT_TYPES[1];
export const TOKEN_CLAIMS_CHANGE = CAEP_EVENT_TYPES[2];

/** SSF 1.0 section 8.1.4.1: the verification event, always delivered on a stream. */
export const VERIFICATION_EVENT = 'https://schemas.openid.net/secevent/ssf/event-type/verification';

/** Signature algorithms accepted on received SETs (asymmetric only: a SET must be verifiable by anyone). */
export const SET_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
  'Ed25519',
];

/** CAEP 1.0 section 3.2: the credential types a credential-change names. */
export const CREDENTIAL_TYPES = [
  'password',
  'pin',
  'x509',
  'fido2-platform',
  'fido2-roaming',
  'fido-u2f',
  'verifiable-credential',
  'phone-voice',
  'phone-sms',
  'app',
] as const;

/** CAEP 1.0 section 3.2: `change_type`. */
export const CHANGE_TYPES = ['create', 'revoke', 'update', 'delete'] as const;
