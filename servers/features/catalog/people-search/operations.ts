/**
 * people-search (SPEC "SKUs and their inputs"): a research dossier on a person from public records
 * and the open web. Sold from now on with its inputs and price; the research is issue 13.
 */
import { z } from 'zod';
import { defineSku, type Sku } from '../../../operation.ts';
import { notBuiltYet } from '../inputs.ts';

/** What every dossier says about itself (SPEC: "not a consumer report or a background check"). */
export const RESEARCH_ONLY =
  'Research output only, not a consumer report or a background check: do not use it for decisions about ' +
  'employment, credit, housing or insurance.';

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((v) => v.trim().length > 0, 'must not be blank');

export const PeopleSearchInput = z.strictObject({
  name: text(200).describe('Full name of the person to research.'),
  context: text(1000)
    .optional()
    .describe('What you know that tells this person apart: employer, role, school, field, how you met.'),
  location: text(200).optional().describe('Where the person lives or works: city, region or country.'),
});
export type PeopleSearchInput = z.infer<typeof PeopleSearchInput>;

const SourceIds = z.array(z.string()).describe('Ids of the sources (in sources) that support this.');

export const PeopleDossier = z.object({
  query: z.object({ name: z.string(), context: z.string().nullable(), location: z.string().nullable() }),
  summary: z.string().describe('A few sentences on who the person most likely is, with the uncertainty.'),
  key_facts: z.array(z.object({ fact: z.string(), source_ids: SourceIds })),
  candidates: z
    .array(
      z.object({
        name: z.string(),
        description: z.string().describe('Who this candidate is: role, organisation, place.'),
        location: z.string().nullable(),
        confidence: z.number().min(0).max(1).describe('How likely this candidate is the person asked about.'),
        source_ids: SourceIds,
      }),
    )
    .describe('Distinct people who match the name, most likely first.'),
  timeline: z
    .array(
      z.object({
        date: z.string().describe('ISO 8601 date, or a year or year-month when only that is known.'),
        event: z.string(),
        source_ids: SourceIds,
      }),
    )
    .describe('Dated statements, oldest first.'),
  affiliations: z.array(
    z.object({
      organization: z.string(),
      role: z.string().nullable(),
      period: z.string().nullable().describe('When, as the sources state it.'),
      source_ids: SourceIds,
    }),
  ),
  digital_footprint: z
    .array(
      z.object({
        kind: z.enum(['profile', 'domain', 'publication', 'other']),
        url: z.string(),
        label: z.string().describe('Platform or site name, or the title.'),
      }),
    )
    .describe('Profiles, domains and publications found.'),
  sources: z.array(
    z.object({
      id: z.string(),
      url: z.string().describe('A page that was actually fetched.'),
      title: z.string().nullable(),
      retrieved_at: z.string().describe('ISO 8601 time it was fetched.'),
    }),
  ),
  next_steps: z.array(z.string()).describe('What to search or ask next to settle what is still open.'),
  disclaimer: z.string().describe(RESEARCH_ONLY),
  generated_at: z.string().describe('ISO 8601 time of the research.'),
});
export type PeopleDossier = z.infer<typeof PeopleDossier>;

const unbuilt = notBuiltYet(13);

const sku: Sku<PeopleSearchInput> = {
  id: 'people-search',
  usdc: 0.01,
  unavailable: unbuilt.unavailable,
  providers: (services) => services.researchProviders,
};

export const researchPerson = defineSku({
  name: 'researchPerson',
  title: 'People research dossier',
  description:
    'Research dossier on a person over public records and the open web, with summary, key facts, candidate ' +
    'matches, timeline, affiliations, digital footprint, cited sources and next steps. Give context and ' +
    'location to tell apart people with the same name. Paid with x402 in USDC on base. It is research ' +
    'output only, not a consumer report or a background check.',
  input: PeopleSearchInput,
  output: PeopleDossier,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable'],
  handler: unbuilt.handler,
});

export const peopleSearchOperations = [researchPerson];
