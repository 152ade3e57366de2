/**
 * entity (SPEC "SKUs and their inputs"): how language models describe a brand entity and where the
 * description drifts from the brand's own sources (`audit.ts`; the comparison itself is
 * `scans/collectors/entity.ts`, which the scanner shares).
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import type { EntityField } from '../../scans/collectors/entity.ts';
import { SkuDomain } from '../inputs.ts';
import { askModel, compareDescription, consistencyScore, findingsOf, readSite } from './audit.ts';

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

const SourceKind = z
  .enum(['json_ld', 'og_site_name', 'title', 'meta_description', 'og_description', 'llms_txt', 'about_page'])
  .describe('Where on the site it was read.');

export const EntityAudit = z.object({
  domain: z.string(),
  brand: z.string().describe('The entity audited.'),
  origin: z.string().describe('Where the site was read, after redirects.'),
  ground_truth: z
    .object({
      fields: z.array(
        z.object({
          field: FieldName,
          value: z.string(),
          source: SourceKind,
          source_url: z.string().describe('Where it was read.'),
        }),
      ),
      consistency: z
        .array(Comparison.extend({ source: SourceKind, source_url: z.string() }))
        .describe(
          "Whether each of the brand's own sources (JSON-LD, titles, meta, llms.txt, about page) agrees.",
        ),
      score: z
        .number()
        .int()
        .min(0)
        .max(100)
        .nullable()
        .describe("How consistent the site's own sources are, 0-100; null with nothing to compare."),
      same_as: z.array(z.string()).describe('Profiles the Organization JSON-LD lists in sameAs.'),
      pages_read: z.number().int(),
    })
    .describe("What the brand's own site says about itself."),
  models: z
    .array(
      z.object({
        provider: z.string().describe('The configured language model provider asked.'),
        model: z.string().describe('The model that answered.'),
        score: z
          .number()
          .int()
          .min(0)
          .max(100)
          .nullable()
          .describe(
            'How consistent its description is, 0-100; null when the site states nothing to compare.',
          ),
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
    .describe("Overall consistency 0-100: the mean of the models' scores; null with no model."),
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
  note: z
    .string()
    .nullable()
    .describe('Set when no language model is configured: the audit covers the own sources only.'),
  audited_at: z.string().describe('ISO 8601 time of the audit.'),
});
export type EntityAudit = z.infer<typeof EntityAudit>;

const sku: Sku<EntityInput> = {
  id: 'entity',
  example: { domain: 'example.com', brand: 'Example' },
  usdc: 0.5,
  // Runs without a language model: the own-source audit is the answer then, and says so.
  unavailable: () => null,
  providers: (services) => services.researchProviders.filter((p) => p.kind === 'llm'),
};

export const auditEntity = defineSku({
  name: 'auditEntity',
  title: 'Entity consistency audit of a brand',
  description:
    'Audit of how large language models describe a brand entity and where the description drifts from ' +
    "what the brand's own site says (name, category, description, founding, headquarters, products, " +
    'people). The site is crawled (robots.txt obeyed): its Organization JSON-LD, titles, meta and OpenGraph ' +
    'descriptions, llms.txt and about page are the ground truth, checked against one another; each ' +
    'configured language model is asked for a structured description, compared field by field ' +
    '(consistent, drift with both values, missing, unknown) and scored 0-100, with findings and fixes and ' +
    'the raw answers cited. Without a configured model the own-source audit alone is returned (note says ' +
    'so; the live catalog lists the providers). Paid with x402 in USDC on base; a site that cannot be read ' +
    '(site_unreachable) or a model that fails or times out (provider_unavailable) is not charged.',
  input: EntityInput,
  output: EntityAudit,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'site_unreachable', 'provider_unavailable'],
  handler: async (ctx, input) => {
    const domain = ctx.services.scans.normalize(input.domain);
    const site = await readSite(ctx, domain);
    const brand = input.brand?.trim() || site.truth.fields.name?.value || domain;
    const models = ctx.services.languageModels;
    const answers = await Promise.all(models.map((model) => askModel(model, { brand, domain }, ctx.signal)));
    const results = answers.map((answer, i) => {
      const comparisons = compareDescription(answer.description, site.truth, brand);
      return {
        provider: (models[i] as (typeof models)[number]).name,
        model: answer.model,
        score: consistencyScore(comparisons),
        comparisons,
        answer: answer.raw,
      };
    });
    const scored = results.map((r) => r.score).filter((s): s is number => s !== null);
    return {
      domain,
      brand,
      origin: site.origin,
      ground_truth: {
        fields: Object.entries(site.truth.fields).map(([field, v]) => ({
          field: field as EntityField,
          value: v.value,
          source: v.source,
          source_url: v.source_url,
        })),
        consistency: site.consistency,
        score: consistencyScore(site.consistency),
        same_as: site.same_as,
        pages_read: site.pages_read,
      },
      models: results,
      score: scored.length ? Math.round(scored.reduce((a, b) => a + b, 0) / scored.length) : null,
      findings: findingsOf(site.consistency, results),
      note:
        models.length === 0
          ? 'No language model provider is configured on this deployment (research.llm.providers): only the ' +
            "brand's own sources were audited."
          : null,
      audited_at: ctx.services.now().toISOString(),
    };
  },
});

export const entityOperations = [auditEntity];
