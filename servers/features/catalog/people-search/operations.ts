/**
 * people-search (SPEC "SKUs and their inputs"): a research dossier on a person from public records
 * and the open web (`research.ts`: search, read, cluster, cite).
 */
import { defineSku, type Sku } from '../../../operation.ts';
import { researchDossier } from './research.ts';
import { PeopleDossier, PeopleSearchInput } from './schemas.ts';

/** SPEC: people-search needs a search provider; without one it is not sold. */
export const noSearchProvider =
  'no web search provider is configured (research.search.searxng_url, or the Brave Search key named by research.search.brave.api_key_env)';

const sku: Sku<PeopleSearchInput> = {
  id: 'people-search',
  example: { name: 'Ada Lovelace', context: 'mathematician, Analytical Engine', location: 'London' },
  usdc: 0.01,
  unavailable: (services) => (services.search ? null : noSearchProvider),
  providers: (services) => services.researchProviders,
  // The dossier is about a person: not kept past delivery, only the payment receipt is.
  keepsResult: false,
};

export const researchPerson = defineSku({
  name: 'researchPerson',
  title: 'People research dossier',
  description:
    'Research dossier on a person over public records and the open web, with summary, key facts, candidate ' +
    'matches, timeline, affiliations, digital footprint, cited sources and next steps. Give context and ' +
    'location to tell apart people with the same name. Several formulations of the name are searched, the ' +
    'top result pages read (robots.txt obeyed), and every fact cites a page that was fetched; people with the same name are kept apart as candidates with a confidence. Paid with x402 in USDC on base; a search provider that fails or times out (provider_unavailable) is not charged. The dossier is not stored. It is research ' +
    'output only, not a consumer report or a background check, and may not be used for employment, credit, housing or insurance decisions.',
  input: PeopleSearchInput,
  output: PeopleDossier,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku,
  errors: ['validation_failed', 'sku_unavailable', 'provider_unavailable'],
  handler: (ctx, input) => researchDossier(ctx, input),
});

export const peopleSearchOperations = [researchPerson];
