/**
 * soul-write (SPEC "SKUs and their inputs"): a durable memory or validation written to a registered
 * agent identity (a soul). Sold from now on with its inputs and price; souls are issue 11.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { notBuiltYet } from '../inputs.ts';

/** Our limit (SPEC sets none): one memory entry. */
export const MAX_MEMORY_CHARACTERS = 8000;

export const MemoryLayer = z
  .enum(['episodic', 'semantic'])
  .describe('episodic: something that happened, at a time; semantic: a lasting fact or judgement.');

export const SoulWriteInput = z.strictObject({
  agent_id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._~:-]+$/, 'must be an agent id (letters, digits and - . _ ~ :)')
    .describe('The agent_id of the registered soul, as in {site_url}/api/soul/agents/{agent_id}.'),
  content: z
    .string()
    .max(MAX_MEMORY_CHARACTERS)
    .refine((v) => v.trim().length > 0, 'must not be blank')
    .describe('The memory or validation to record, as text.'),
  layer: MemoryLayer.default('episodic'),
});
export type SoulWriteInput = z.infer<typeof SoulWriteInput>;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const SoulMemory = z.object({
  memory_id: z.uuid(),
  agent_id: z.string(),
  layer: MemoryLayer,
  kind: z.enum(['memory', 'validation']),
  sequence: z.number().int().min(1).describe("Position in the soul's append-only log, from 1."),
  content_digest: Sha256.describe('SHA-256 of the content, hex.'),
  previous_digest: Sha256.nullable().describe('Digest of the entry before this one; null for the first.'),
  digest: Sha256.describe('SHA-256 of this entry, which the next entry names: the chain a reader checks.'),
  writer: z
    .object({ kind: z.literal('payer'), address: z.string().describe('The EVM address that paid.') })
    .describe('Who wrote the entry: the payer of this call.'),
  recorded_at: z.string().describe('ISO 8601 time the entry was recorded.'),
  url: z.string().describe("The soul's memories, where this entry can be read."),
});
export type SoulMemory = z.infer<typeof SoulMemory>;

const unbuilt = notBuiltYet(11);

const sku: Sku<SoulWriteInput> = { id: 'soul-write', usdc: 0.01, unavailable: unbuilt.unavailable };

export const writeSoulMemory = defineSku({
  name: 'writeSoulMemory',
  title: 'Write a memory to an agent identity',
  description:
    'Writes a durable memory or validation to a registered agent identity (a soul): appended to its ' +
    'hash-chained log, so anyone can check that nothing was removed or changed. Paid with x402 in USDC on ' +
    "base; the payer's address is recorded as the writer. Returns the entry with its position and digests.",
  input: SoulWriteInput,
  output: SoulMemory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const soulWriteOperations = [writeSoulMemory];
