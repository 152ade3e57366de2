/**
 * entity (SPEC "SKUs and their inputs"): how language models describe a brand entity and where the
 * description drifts from the brand's own sources. Sold from now on with its inputs and price; the
 * audit is issue 13.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { notBuiltYet, SkuDomain } from '../inputs.ts';

export const EntityInput = z.strictObject({
  domain: SkuDomain.describe("The brand's own domain, such as example.com: the ground truth is read there."),
  brand: z
    .string()
    .max(200)
    .refine((v) => v.trim().length > 0, 'must not be blank')
    .optional()
    .describe('The brand name when it differs from what the site calls itself.'),
});
export type EntityInput = z.infer<typeof EntityInput>;

const FieldName = z
  .enum(['name', 'category', 'description', 'founded', 'headquarters', 'products', 'people'])
  .describe('The attribute of the entity compared.');

const Comparison = z.object({
  field: FieldName,
  verdict: z
    .enum(['consistent', 'drift', 'missing', 'unknown'])
    .describe('drift: the values disagree; missing: not stated; unknown: nothing to compare with.'),
  expected: z.string().nullable().describe("What the brand's own sources say."),
  found: z.string().nullable().describe('What this source or model says.'),
});

export const EntityAudit = z.object({
  domain: z.string(),
  brand: z.string().describe('The entity audited.'),
  ground_truth: z
    .object({
      fields: z.array(
        z.object({
          field: FieldName,
          value: z.string(),
          source_url: z.string().describe('Where it was read.'),
        }),
      ),
      consistency: z
        .array(Comparison.extend({ source_url: z.string() }))
        .describe(
          "Whether each of the brand's own sources (JSON-LD, titles, meta, llms.txt, about page) agrees.",
        ),
    })
    .describe("What the brand's own site says about itself."),
  models: z
    .array(
      z.object({
        provider: z.string().describe('The configured language model provider and model asked.'),
        score: z.number().int().min(0).max(100).describe('How consistent its description is, 0-100.'),
        comparisons: z.array(Comparison),
        answer: z.string().describe("The model's raw answer, cited."),
      }),
    )
    .describe('Per language model: its description compared field by field with the ground truth.'),
  score: z
    .number()
    .int()
    .min(0)
    .max(100)
    .nullable()
    .describe('Overall consistency 0-100; null with no model.'),
  findings: z
    .array(
      z.object({
        field: FieldName,
        severity: z.enum(['critical', 'warning', 'info']),
        seen: z.string().describe('Where the description drifts.'),
        fix: z.string().describe('What to publish where so models pick it up.'),
      }),
    )
    .describe('Where the description drifts, worst first, with fixes.'),
  audited_at: z.string().describe('ISO 8601 time of the audit.'),
});
export type EntityAudit = z.infer<typeof EntityAudit>;

const unbuilt = notBuiltYet(13);

const sku: Sku<EntityInput> = { id: 'entity', usdc: 0.5, unavailable: unbuilt.unavailable };

export const auditEntity = defineSku({
  name: 'auditEntity',
  title: 'Entity consistency audit of a brand',
  description:
    'Audit of how large language models describe a brand entity and where the description drifts from ' +
    "what the brand's own site says (name, category, description, founding, headquarters, products, " +
    'people). Paid with x402 in USDC on base. Returns the ground truth with its sources, each model compared ' +
    'field by field with a 0-100 score, and findings with fixes.',
  input: EntityInput,
  output: EntityAudit,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const entityOperations = [auditEntity];
