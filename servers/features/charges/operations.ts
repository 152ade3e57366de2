import { defineOperation } from '../../operation.ts';
import { ChargeLookupInput, ChargeLookupResult } from './schemas.ts';

export const lookupCardCharge = defineOperation({
  name: 'lookupCardCharge',
  title: 'Which brand is behind a card charge',
  description:
    'Identify the brand behind one line of a card statement. Pass the line exactly as the bank shows it ' +
    '(issuer noise, dates, store numbers, cities and processor prefixes such as "SQ *", "TST*" or "PAYPAL *" ' +
    'are handled). Returns candidate brands best first, each with a confidence, its domain, and its public ' +
    'support and returns contacts where known; an unrecognised charge returns an empty list. Use the domain ' +
    'of the chosen match as brand_domain when starting a return request.',
  input: ChargeLookupInput,
  output: ChargeLookupResult,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  access: 'public',
  http: { surface: 'cs', method: 'GET', path: '/agent', input: 'query' },
  mcp: ['public'],
  errors: ['validation_failed'],
  tags: ['customer service'],
  handler: async (ctx, input) => ctx.services.charges.lookup(input.charge),
});

export const chargeOperations = [lookupCardCharge];
