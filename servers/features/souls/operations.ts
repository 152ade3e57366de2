/**
 * The soul API (issue 11, docs/guides/souls.md): the challenge and the registry on the public API,
 * registration, identity documents, memories and writes under `{site_url}/api/soul`. Reads are
 * public MCP tools too; writes take a Bearer token (`access: 'soul'`).
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.ts';
import {
  AddMemoryInput,
  Challenge,
  ChallengeInput,
  GetSoulInput,
  LinkRegistrationInput,
  ListMemoriesInput,
  LogJwks,
  Memory,
  MemoryPage,
  RegisterSoulInput,
  RetireInput,
  RotateKeyInput,
  SearchSoulsInput,
  SoulDocument,
  SoulPage,
  UpdateProfileInput,
} from './schemas.ts';

const TAGS = ['souls'];
const AGENT_PATH = '/api/soul/agents/:agent_id';

export const createSoulChallenge = defineOperation({
  name: 'createSoulChallenge',
  title: 'Get a challenge to register a soul',
  description:
    'First step of registering a soul (a permanent, verifiable agent identity): send your public key (JWK, Ed25519 or ' +
    'P-256) and get a challenge string, valid 5 minutes and usable once. Sign the challenge string as the payload of a ' +
    'compact JWS with the private key and send it to POST {site_url}/api/soul/agents.',
  input: ChallengeInput,
  output: Challenge,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'POST', path: '/soul/challenge', input: 'body', successStatus: 201 },
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'rate_limited'],
  tags: TAGS,
  handler: (ctx, input) => ctx.services.souls.issueChallenge(input.public_key),
});

export const registerSoul = defineOperation({
  name: 'registerSoul',
  title: 'Register a soul',
  description:
    'Registers a permanent agent identity bound to your key: public_key, the challenge from POST /soul/challenge, ' +
    'signature (compact JWS of the challenge by the private key), a unique lower-case handle, name, description and ' +
    'optionally image, endpoints (mcp, a2a, web) and operator. The agent_id is the RFC 9278 thumbprint URI of the key ' +
    'and never changes. Sent with an OAuth access token of this service (Authorization: Bearer, optional), the soul ' +
    'is linked to that account, which may then write to it too. Returns the identity document.',
  input: RegisterSoulInput,
  output: SoulDocument,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'soul',
  http: { surface: 'site', method: 'POST', path: '/api/soul/agents', input: 'body', successStatus: 201 },
  rateLimit: 'unauthenticated_writes',
  errors: ['validation_failed', 'handle_taken', 'soul_key_taken', 'invalid_token', 'rate_limited'],
  tags: TAGS,
  handler: (ctx, input) =>
    ctx.services.souls.register(input, ctx.account?.keyId === null ? ctx.account.id : null),
});

export const getSoul = defineOperation({
  name: 'getSoul',
  title: "A soul's identity document",
  description:
    'The identity document of a registered soul (agent identity): agent_id, handle, status, profile (name, ' +
    'description, image, endpoints, operator), current and past public keys with their validity, created_at, ' +
    'memory counts by layer, the head of its hash-chained log, the latest validations and linked ERC-8004 identities.',
  input: GetSoulInput,
  output: SoulDocument,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'site', method: 'GET', path: AGENT_PATH, input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: TAGS,
  handler: (ctx, input) => ctx.services.souls.document(input.agent_id),
});

export const listSoulMemories = defineOperation({
  name: 'listSoulMemories',
  title: "A soul's memories",
  description:
    "A soul's append-only memory log, oldest first, optionally one layer (episodic or semantic). Each entry has its " +
    'sequence, content, content_digest, previous_digest and digest, so a reader can recompute the hash chain and see ' +
    'that nothing was removed or changed. Pass next_cursor as cursor for more.',
  input: ListMemoriesInput,
  output: MemoryPage,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'site', method: 'GET', path: `${AGENT_PATH}/memories`, input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: TAGS,
  handler: (ctx, input) => ctx.services.souls.memories(input),
});

export const getSoulLogKeys = defineOperation({
  name: 'getSoulLogKeys',
  title: "The service's soul log keys",
  description:
    'The JWKS (RFC 7517) of the keys the service signs soul logs with: entries written by accounts and payers, ' +
    'entries signed when logs were migrated (kid soul-log-migration), and checkpoints. Every key that ever signed ' +
    'stays listed, so old signatures keep verifying after a rotation.',
  input: z.strictObject({}),
  output: LogJwks,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'site', method: 'GET', path: '/api/soul/jwks.json', input: 'query' },
  errors: [],
  tags: TAGS,
  handler: (ctx) => ctx.services.souls.logKeys(),
});

export const searchSouls = defineOperation({
  name: 'searchSouls',
  title: 'Search the soul registry',
  description:
    'Registered souls (agent identities), newest first, optionally those whose handle or name contains q. ' +
    'Pass next_cursor as cursor for more; get_soul reads one in full.',
  input: SearchSoulsInput,
  output: SoulPage,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/soul', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: TAGS,
  handler: (ctx, input) => ctx.services.souls.search(input),
});

export const Erc8004Registration = z.object({
  type: z.literal('https://eips.ethereum.org/EIPS/eip-8004#registration-v1'),
  name: z.string(),
  description: z.string(),
  image: z.string(),
  services: z.array(z.object({ name: z.string(), endpoint: z.string(), version: z.string().optional() })),
  x402Support: z.boolean(),
  active: z.boolean(),
  registrations: z.array(z.object({ agentId: z.union([z.number(), z.string()]), agentRegistry: z.string() })),
  supportedTrust: z.array(z.string()),
});

export const getSoulErc8004Registration = defineOperation({
  name: 'getSoulErc8004Registration',
  title: "A soul's ERC-8004 agent registration file",
  description:
    'The soul as an ERC-8004 (Trustless Agents) agent registration file (type registration-v1: name, description, ' +
    'image, services with its web, MCP and A2A endpoints, the soul document and linked wallets, x402Support, active, ' +
    'registrations, supportedTrust). Point the agentURI of an ERC-8004 Identity Registry entry at this URL.',
  input: GetSoulInput,
  output: Erc8004Registration,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'site', method: 'GET', path: `${AGENT_PATH}/erc-8004`, input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed', 'not_found'],
  tags: TAGS,
  handler: (ctx, input) => ctx.services.souls.erc8004Registration(input.agent_id),
});

const WRITE_ERRORS = [
  'validation_failed',
  'invalid_token',
  'forbidden',
  'not_found',
  'soul_retired',
] as const;

export const updateSoulProfile = defineOperation({
  name: 'updateSoulProfile',
  title: "Update a soul's profile",
  description:
    "Changes a soul's name, description, image, endpoints or operator. Bearer: a JWT signed by the soul's current key " +
    'or an access token of the linked account. Returns the identity document.',
  input: UpdateProfileInput,
  output: SoulDocument,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: 'soul',
  http: { surface: 'site', method: 'POST', path: `${AGENT_PATH}/profile`, input: 'body' },
  errors: [...WRITE_ERRORS],
  tags: TAGS,
  handler: async (ctx, { agent_id, ...changes }) => {
    await ctx.services.souls.writerFor(ctx, agent_id);
    return ctx.services.souls.updateProfile(agent_id, changes);
  },
});

export const rotateSoulKey = defineOperation({
  name: 'rotateSoulKey',
  title: "Rotate a soul's key",
  description:
    "Replaces the soul's key. Signed by both keys: the Bearer JWT by the current key, with the claim new_key = the " +
    'RFC 7638 thumbprint of the new key (kept as its endorsement), and proof (a JWT of the same rules) by the new ' +
    'one. The agent_id does not change; the old key stays listed with the time it ended.',
  input: RotateKeyInput,
  output: SoulDocument,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  access: 'soul',
  http: { surface: 'site', method: 'POST', path: `${AGENT_PATH}/keys`, input: 'body' },
  errors: [...WRITE_ERRORS, 'soul_key_taken', 'conflict'],
  tags: TAGS,
  handler: async (ctx, input) => {
    const writer = await ctx.services.souls.writerFor(ctx, input.agent_id, { soulKeyOnly: true });
    if (writer.kind !== 'soul') throw new Error('writerFor let a rotation through without the soul key');
    return ctx.services.souls.rotateKey(input.agent_id, input.public_key, input.proof, writer.token);
  },
});

export const addSoulMemory = defineOperation({
  name: 'addSoulMemory',
  title: 'Add a memory to a soul',
  description:
    "Appends a memory or validation to the soul's hash-chained, signed log, written as the soul (a JWT signed by its " +
    'current key whose memory claim is {content_digest: hex SHA-256 of content, layer, kind, previous_digest?}; the ' +
    'JWT is kept as the signature) or as its linked account (an access token; the service signs). Returns the ' +
    'entry with its sequence, digests and signature.',
  input: AddMemoryInput,
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'soul',
  http: {
    surface: 'site',
    method: 'POST',
    path: `${AGENT_PATH}/memories`,
    input: 'body',
    successStatus: 201,
  },
  errors: [...WRITE_ERRORS, 'conflict'],
  tags: TAGS,
  handler: async (ctx, input) => {
    const writer = await ctx.services.souls.writerFor(ctx, input.agent_id);
    return ctx.services.souls.append(input.agent_id, { ...input, writer });
  },
});

export const retireSoul = defineOperation({
  name: 'retireSoul',
  title: 'Retire a soul',
  description:
    'Retires the identity for good: it stays readable (document, memories, registry) and takes no more writes. ' +
    "Bearer: a JWT signed by the soul's current key or an access token of the linked account.",
  input: RetireInput,
  output: SoulDocument,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  access: 'soul',
  http: { surface: 'site', method: 'POST', path: `${AGENT_PATH}/retire`, input: 'body' },
  errors: [...WRITE_ERRORS],
  tags: TAGS,
  handler: async (ctx, input) => {
    await ctx.services.souls.writerFor(ctx, input.agent_id);
    return ctx.services.souls.retire(input.agent_id);
  },
});

export const linkSoulErc8004 = defineOperation({
  name: 'linkSoulErc8004',
  title: 'Link an ERC-8004 identity to a soul',
  description:
    'Links an ERC-8004 Identity Registry entry (agent_registry eip155:<chain>:<registry>, erc8004_agent_id) to the ' +
    'soul, proven by the owning wallet\'s EIP-191 signature of "Link ERC-8004 agent <erc8004_agent_id> of ' +
    '<agent_registry> to soul <agent_id>". It is then listed under registrations in the ERC-8004 registration file.',
  input: LinkRegistrationInput,
  output: SoulDocument,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: 'soul',
  http: {
    surface: 'site',
    method: 'POST',
    path: `${AGENT_PATH}/registrations`,
    input: 'body',
    successStatus: 201,
  },
  errors: [...WRITE_ERRORS, 'conflict'],
  tags: TAGS,
  handler: async (ctx, input) => {
    await ctx.services.souls.writerFor(ctx, input.agent_id);
    return ctx.services.souls.linkRegistration(input);
  },
});

export const soulOperations = [
  createSoulChallenge,
  registerSoul,
  getSoul,
  listSoulMemories,
  getSoulLogKeys,
  searchSouls,
  getSoulErc8004Registration,
  updateSoulProfile,
  rotateSoulKey,
  addSoulMemory,
  retireSoul,
  linkSoulErc8004,
];
