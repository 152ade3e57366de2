/**
 * soul-write (SPEC "SKUs and their inputs"): a durable memory or validation written to a registered
 * agent identity (a soul), appended to its hash-chained log (`features/souls/`). Anyone may pay; the
 * writer recorded is the payer's address, so a validation is always attributable to who paid for it. The soul is checked before any payment is asked for: an
 * unknown agent_id is 404 and a retired soul 409, never a 402.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { AgentId } from '../../souls/keys.ts';
import { Memory, MemoryContent, MemoryKind, MemoryLayer } from '../../souls/schemas.ts';

export { MAX_MEMORY_CHARACTERS } from '../../souls/schemas.ts';

export const SoulWriteInput = z.strictObject({
  agent_id: AgentId.describe(
    'The agent_id of the registered soul, as in {site_url}/api/soul/agents/{agent_id}.',
  ),
  content: MemoryContent,
  layer: MemoryLayer.default('episodic'),
  // Beyond SPEC's inputs (optional, so every SPEC call stays valid): "writes a durable memory or
  // validation" needs a way to say which.
  kind: MemoryKind.default('memory'),
});
export type SoulWriteInput = z.infer<typeof SoulWriteInput>;

const sku: Sku<SoulWriteInput> = {
  id: 'soul-write',
  example: {
    agent_id: 'urn:ietf:params:oauth:jwk-thumbprint:sha-256:NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs',
    content: 'Prefers a refund to store credit.',
    layer: 'semantic',
    kind: 'memory',
  },
  usdc: 0.01,
  unavailable: () => null,
  check: (ctx, input) => ctx.services.souls.requireActive(input.agent_id),
};

export const writeSoulMemory = defineSku({
  name: 'writeSoulMemory',
  title: 'Write a memory to an agent identity',
  description:
    'Writes a durable memory or validation to a registered agent identity (a soul): appended to its ' +
    'hash-chained log, so anyone can check that nothing was removed or changed. Paid with x402 in USDC on ' +
    "base; the payer's address is recorded as the writer. An unknown agent_id answers not_found before any payment. " +
    'Returns the entry with its position and digests.',
  input: SoulWriteInput,
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'not_found', 'soul_retired', 'sku_unavailable'],
  handler: async (ctx, input) => {
    const payment = ctx.payment;
    if (!payment?.payer || !payment.id) throw new Error('soul-write ran without a payment');
    return ctx.services.souls.append(input.agent_id, {
      content: input.content,
      layer: input.layer,
      kind: input.kind,
      writer: { kind: 'payer', id: payment.payer.toLowerCase() },
      paymentId: payment.id,
    });
  },
});

export const soulWriteOperations = [writeSoulMemory];
