/**
 * The people-search SKU's input and its dossier (SPEC "SKUs and their inputs"): the schemas the
 * operation publishes and the research (`research.ts`) builds, in a leaf both import.
 */
import { z } from 'zod';

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
const CandidateId = z
  .string()
  .nullable()
  .describe('The candidate (in candidates) this is about: people with the same name are kept apart.');

export const PeopleDossier = z.object({
  query: z.object({ name: z.string(), context: z.string().nullable(), location: z.string().nullable() }),
  summary: z.string().describe('A few sentences on who the person most likely is, with the uncertainty.'),
  summary_source: z
    .string()
    .describe('Who wrote the summary: "extractive" (from the pages) or "llm:<provider>".'),
  key_facts: z.array(z.object({ fact: z.string(), source_ids: SourceIds, candidate_id: CandidateId })),
  candidates: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        description: z.string().describe('Who this candidate is: role, organisation, place.'),
        location: z.string().nullable(),
        confidence: z.number().min(0).max(1).describe('How likely this candidate is the person asked about.'),
        source_ids: SourceIds,
      }),
    )
    .describe(
      'Distinct people who match the name, most likely first: pages clustered by the organisations and places they name together.',
    ),
  timeline: z
    .array(
      z.object({
        date: z.string().describe('ISO 8601 date, or a year or year-month when only that is known.'),
        event: z.string(),
        source_ids: SourceIds,
        candidate_id: CandidateId,
      }),
    )
    .describe('Dated statements, oldest first.'),
  affiliations: z.array(
    z.object({
      organization: z.string(),
      role: z.string().nullable(),
      period: z.string().nullable().describe('When, as the sources state it.'),
      source_ids: SourceIds,
      candidate_id: CandidateId,
    }),
  ),
  digital_footprint: z
    .array(
      z.object({
        kind: z.enum(['profile', 'domain', 'publication', 'other']),
        url: z.string(),
        label: z.string().describe('Platform or site name, or the title.'),
        candidate_id: CandidateId,
      }),
    )
    .describe('Profiles, domains and publications found (pages read, and the profiles they link to).'),
  sources: z.array(
    z.object({
      id: z.string(),
      url: z.string().describe('A page that was actually fetched.'),
      title: z.string().nullable(),
      retrieved_at: z.string().describe('ISO 8601 time it was fetched.'),
    }),
  ),
  searches: z
    .array(z.object({ query: z.string(), results: z.number().int() }))
    .describe('The formulations searched and how many results each gave.'),
  pages: z
    .object({
      read: z.number().int().describe('Result pages fetched and read.'),
      about_person: z.number().int().describe('Pages that name the person (the sources).'),
      skipped_by_robots: z.array(z.string()).describe("Result pages their site's robots.txt keeps from us."),
      failed: z.number().int().describe('Result pages that could not be fetched or are not pages.'),
    })
    .describe('What became of the result pages.'),
  next_steps: z.array(z.string()).describe('What to search or ask next to settle what is still open.'),
  disclaimer: z.string().describe(RESEARCH_ONLY),
  generated_at: z.string().describe('ISO 8601 time of the research.'),
});
export type PeopleDossier = z.infer<typeof PeopleDossier>;
