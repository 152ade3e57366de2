/** Payloads of the descriptor declarations (`declaration-operations.ts`, and POST /brand-agent). */
import { z } from 'zod';
import { MAX_DECLARED_PER_DOMAIN, MAX_DESCRIPTOR_LENGTH } from './declarations.ts';

/** The array as the API takes it; each descriptor's own rules are checked by `DescriptorDeclarations`. */
export const StatementDescriptors = z
  .array(z.string().max(200, 'must be at most 200 characters'))
  .max(MAX_DECLARED_PER_DOMAIN, `must hold at most ${MAX_DECLARED_PER_DOMAIN} descriptors`)
  .describe(
    `The statement descriptors your charges carry, as cardholders see them (e.g. "HLCYN RSTRS", "SQ *HALCYON ` +
      `ROASTERS"): at most ${MAX_DECLARED_PER_DOMAIN}, ${MAX_DESCRIPTOR_LENGTH} characters each, at least 4 ` +
      'letters or digits besides a processor prefix (with a prefix, only lines through that processor match). ' +
      'They replace the ones declared before; [] clears them. A descriptor another domain declared, or that the ' +
      'brand registry gives to another brand, is refused (409 descriptor_taken).',
  );

const SiteId = z.uuid().describe('Id of your site (POST /pixel-install returns it).');

export const DeclareDescriptorsInput = z.strictObject({ site_id: SiteId, descriptors: StatementDescriptors });
export const ListDescriptorsInput = z.strictObject({ site_id: SiteId });

export const DeclaredDescriptors = z.object({
  site_id: z.uuid(),
  domain: z.string(),
  descriptors: z
    .array(
      z.object({
        descriptor: z.string().describe('Upper case, whitespace collapsed.'),
        processor: z
          .string()
          .nullable()
          .describe('The processor its prefix names (square, toast...): only lines through it match.'),
        declared_at: z.iso.datetime(),
      }),
    )
    .describe('Matched by GET {base_url}/agent at very_high, with source brand_declared.'),
});
