/** Payloads of the soul API (issue 11): registration, the identity document, memories, the registry. */
import { z } from 'zod';
import { Cursor, Limit, NextCursor } from '../../pagination.ts';
import { addressField } from '../../public-address.ts';
import { AgentId, PublicJwk } from './keys.ts';

/** Our limit (SPEC sets none): one memory entry, in characters. */
export const MAX_MEMORY_CHARACTERS = 8000;

export const MemoryLayer = z
  .enum(['episodic', 'semantic'])
  .describe('episodic: something that happened, at a time; semantic: a lasting fact or judgement.');
export type MemoryLayer = z.infer<typeof MemoryLayer>;

export const MemoryKind = z
  .enum(['memory', 'validation'])
  .describe(
    "memory: something the soul remembers; validation: someone's attestation about the soul or its work.",
  );

export const MemoryContent = z
  .string()
  .max(MAX_MEMORY_CHARACTERS)
  .refine((v) => v.trim().length > 0, 'must not be blank')
  .describe(`The memory or validation to record, as text (at most ${MAX_MEMORY_CHARACTERS} characters).`);

export const Handle = z
  .string()
  .min(3)
  .max(40)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, 'must be lower case letters, digits and inner hyphens')
  .describe('Unique handle, 3 to 40 lower case letters, digits and hyphens (not at either end).');

const HttpUrl = addressField(
  z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
  'url',
);

export const Endpoints = z
  .strictObject({
    mcp: HttpUrl.optional().describe("The agent's MCP server (Streamable HTTP)."),
    a2a: HttpUrl.optional().describe("The agent's A2A agent card."),
    web: HttpUrl.optional().describe("The agent's web page."),
  })
  .describe('Where the agent is reached.');

export const Operator = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    url: HttpUrl.optional(),
    email: z.email().max(254).optional(),
  })
  .describe('Who runs the agent, as the agent declares it (not verified).');

const Name = z.string().trim().min(1).max(100).describe('Display name, 1 to 100 characters.');
const Description = z.string().trim().min(1).max(2000).describe('What the agent does, 1 to 2000 characters.');
const Image = HttpUrl.describe('Avatar image URL (the ERC-8004 registration file shows it).');

export const Jws = z
  .string()
  .max(4000)
  .regex(/^[\w-]+\.[\w-]*\.[\w-]+$/, 'must be a compact JWS (three base64url parts)');

export const ChallengeInput = z.strictObject({ public_key: PublicJwk });

export const Challenge = z.object({
  challenge: z
    .string()
    .describe('Sign exactly this string (as the JWS payload) with the private key; single use.'),
  expires_at: z.iso.datetime().describe('Five minutes from now.'),
});

export const RegisterSoulInput = z.strictObject({
  public_key: PublicJwk,
  challenge: z.string().min(1).max(200).describe('The challenge from POST {public_api_url}/soul/challenge.'),
  signature: Jws.describe(
    'Compact JWS whose payload is the challenge string, signed with the matching private key.',
  ),
  handle: Handle,
  name: Name,
  description: Description,
  image: Image.optional(),
  endpoints: Endpoints.optional(),
  operator: Operator.optional(),
});
export type RegisterSoulInput = z.infer<typeof RegisterSoulInput>;

const SIGNERS =
  "soul: one of the soul's keys (kid is its thumbprint in keys); service: a key of the service's JWKS " +
  '({site_url}/api/soul/jwks.json, kid as there).';
const ORIGINS =
  'writer: signed when written, by its writer (the service signs for accounts and payers); migration: ' +
  'written before logs were signed and signed then by the service (kid soul-log-migration), not by its writer.';

export const Signature = z
  .object({
    signer: z.enum(['soul', 'service']).describe(SIGNERS),
    kid: z.string().describe('The key that verifies jws.'),
    origin: z.enum(['writer', 'migration']).describe(ORIGINS),
    jws: z.string().describe('Compact JWS (docs/guides/souls.md, "Checking a log").'),
  })
  .describe('Who vouches for this, and the signature to check it with.');
export type Signature = z.infer<typeof Signature>;

export const SoulKey = z.object({
  jwk: z.record(z.string(), z.string()).describe('Public JWK.'),
  thumbprint: z.string().describe('RFC 7638 SHA-256 thumbprint, base64url: the kid of what it signs.'),
  valid_from: z.iso.datetime(),
  valid_until: z.iso.datetime().nullable().describe('Null for the current key.'),
  endorsement: Signature.nullable().describe(
    'For a rotated-in key: the rotation JWT signed by the key before it, whose new_key claim is this ' +
      "key's thumbprint. Null for the first key (the agent_id is its thumbprint).",
  ),
});

export const Writer = z
  .object({
    kind: z.enum(['soul', 'account', 'payer']),
    id: z.string().describe('The agent_id, the account id, or the EVM address that paid.'),
  })
  .describe('Who wrote the entry: the soul itself, its linked account, or the payer of a soul-write.');

export const Memory = z.object({
  memory_id: z.uuid(),
  agent_id: z.string(),
  sequence: z.number().int().min(1).describe("Position in the soul's append-only log, from 1."),
  layer: MemoryLayer,
  kind: MemoryKind,
  content: z.string(),
  content_digest: z.string().describe('SHA-256 of the content (UTF-8), hex.'),
  previous_digest: z.string().nullable().describe('Digest of the entry before this one; null for the first.'),
  digest: z
    .string()
    .describe('SHA-256 of this entry (docs/guides/souls.md, the chain), which the next entry names, hex.'),
  writer: Writer,
  recorded_at: z.iso.datetime(),
  signature: Signature.nullable().describe(
    "The writer's signature: for the soul, the JWT it wrote with (its memory claim binds content_digest, " +
      "layer and kind); for an account or a payer, the service's JWS whose payload is digest. Null only for " +
      'an entry a service version older than signed logs wrote; such an entry fails the check.',
  ),
});
export type Memory = z.infer<typeof Memory>;

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 (64 lower case digits)');

/**
 * The claim `memory` a soul's JWT carries to write an entry (docs/guides/souls.md): the JWT is kept as the
 * entry's signature, so it must bind what is written.
 */
export const MemoryClaim = z.strictObject({
  content_digest: Sha256Hex,
  layer: MemoryLayer,
  kind: MemoryKind,
  previous_digest: Sha256Hex.nullable().optional(),
});
export type MemoryClaim = z.infer<typeof MemoryClaim>;

export const Checkpoint = z
  .object({
    sequence: z.number().int().min(0).describe('The last entry when it was signed; 0 before the first.'),
    digest: z.string().nullable().describe("That entry's digest; null before the first."),
    issued_at: z.iso.datetime().describe('When the service signed it: the last write, or the migration.'),
    kid: z.string().describe("The service's key (JWKS {site_url}/api/soul/jwks.json)."),
    jws: z
      .string()
      .describe(
        'Compact JWS (typ soul-checkpoint+jws) whose payload is the JSON {agent_id, sequence, digest, issued_at}; ' +
          'trust the verified payload, not the copies beside it.',
      ),
  })
  .describe(
    "The service's signed statement of the log's head: a log that ends before it, or differs at it, was cut " +
      'or rewritten. Null only for a soul no service version with signed logs has written to or migrated.',
  );

export const Registration = z.object({
  agentRegistry: z.string().describe('eip155:<chain id>:<ERC-8004 Identity Registry address>.'),
  agentId: z.string().describe('The ERC-8004 agentId (ERC-721 token id), decimal.'),
  owner: z.string().describe('The wallet whose signature proved the link.'),
  linked_at: z.iso.datetime(),
});

export const SoulDocument = z.object({
  agent_id: z.string(),
  handle: z.string(),
  status: z.enum(['active', 'retired']),
  profile: z.object({
    name: z.string(),
    description: z.string(),
    image: z.string().nullable(),
    endpoints: z.object({
      mcp: z.string().optional(),
      a2a: z.string().optional(),
      web: z.string().optional(),
    }),
    operator: z
      .object({ name: z.string().optional(), url: z.string().optional(), email: z.string().optional() })
      .nullable(),
  }),
  keys: z.array(SoulKey).describe('Current key first, then past keys, newest first.'),
  linked_account: z
    .boolean()
    .describe('Whether an account of this service is linked (its id is not published).'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  retired_at: z.iso.datetime().nullable(),
  memory_counts: z.object({ episodic: z.number().int(), semantic: z.number().int() }),
  head: z
    .object({ sequence: z.number().int(), digest: z.string() })
    .nullable()
    .describe("The log's last entry: a reader who verified the chain up to it has everything."),
  checkpoint: Checkpoint.nullable(),
  validations: z.object({
    count: z.number().int(),
    latest: z.array(Memory).describe('The ten latest validations, newest first.'),
  }),
  registrations: z.array(Registration).describe('Linked ERC-8004 identities.'),
  urls: z.object({
    document: z.string(),
    memories: z.string(),
    erc8004_registration: z.string().describe('The ERC-8004 agent registration file: point agentURI here.'),
    signing_keys: z
      .string()
      .describe("The service's JWKS: the keys of every service signature and checkpoint, kept for good."),
  }),
});
export type SoulDocument = z.infer<typeof SoulDocument>;

export const GetSoulInput = z.strictObject({ agent_id: AgentId });

export const ListMemoriesInput = z.strictObject({
  agent_id: AgentId,
  layer: MemoryLayer.optional().describe('Only this layer.'),
  cursor: z
    .string()
    .max(40)
    .optional()
    .describe('next_cursor of the previous page; omit for the first. Opaque.'),
  limit: Limit,
});

export const MemoryPage = z.object({
  memories: z
    .array(Memory)
    .describe('Oldest first (sequence order), so a reader can check the chain as it pages.'),
  next_cursor: NextCursor,
});

export const SearchSoulsInput = z.strictObject({
  q: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('Text in the handle or the name (case-insensitive).'),
  cursor: Cursor,
  limit: Limit,
});

export const SoulSummary = z.object({
  agent_id: z.string(),
  handle: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.enum(['active', 'retired']),
  created_at: z.iso.datetime(),
  url: z.string().describe('The identity document.'),
});

export const SoulPage = z.object({
  souls: z.array(SoulSummary).describe('Newest first.'),
  next_cursor: NextCursor,
});

export const UpdateProfileInput = z
  .strictObject({
    agent_id: AgentId,
    name: Name.optional(),
    description: Description.optional(),
    image: Image.nullable().optional(),
    endpoints: Endpoints.optional().describe('Replaces the endpoints.'),
    operator: Operator.nullable().optional(),
  })
  .refine((v) => Object.keys(v).length > 1, 'must change at least one field');

export const RotateKeyInput = z.strictObject({
  agent_id: AgentId,
  public_key: PublicJwk.describe('The new public key.'),
  proof: Jws.describe(
    'A JWT signed with the NEW private key, under the same rules as the Bearer JWT (iss = agent_id, aud = the soul API URL, ' +
      'exp at most 5 minutes after iat, single-use jti). The Bearer JWT is signed with the current (old) key.',
  ),
});

export const AddMemoryInput = z.strictObject({
  agent_id: AgentId,
  content: MemoryContent,
  layer: MemoryLayer.default('episodic'),
  kind: MemoryKind.default('memory'),
});

export const RetireInput = z.strictObject({ agent_id: AgentId });

export const LinkRegistrationInput = z.strictObject({
  agent_id: AgentId,
  agent_registry: z
    .string()
    .regex(/^eip155:\d{1,12}:0x[0-9a-fA-F]{40}$/, 'must be eip155:<chain id>:<registry address>')
    .describe('The ERC-8004 Identity Registry, e.g. eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432.'),
  erc8004_agent_id: z
    .string()
    .regex(/^\d{1,78}$/, 'must be a decimal token id')
    .describe('The agentId (ERC-721 token id) in that registry.'),
  owner: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be an EVM address')
    .describe('The wallet that owns the token.'),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/, 'must be a 65-byte hex signature')
    .describe('EIP-191 personal_sign by the owner of the link message (docs/guides/souls.md, ERC-8004).'),
});

export const LogJwks = z.object({
  keys: z
    .array(
      z.object({
        kty: z.literal('EC'),
        crv: z.literal('P-256'),
        x: z.string(),
        y: z.string(),
        kid: z.string(),
        alg: z.literal('ES256'),
        use: z.literal('sig'),
      }),
    )
    .describe('Every key that ever signed a soul log, oldest first; none is ever removed.'),
});
export type LogJwks = z.infer<typeof LogJwks>;
