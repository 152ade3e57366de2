import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { DescriptorDeclarations } from '../../servers/features/charges/declarations.ts';
import { ChargeLookup } from '../../servers/features/charges/lookup.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import type { MerchantResolver } from '../../servers/features/charges/resolution.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

/** The lines below are confident registry matches: live resolution must never be asked. */
const neverAsked = {
  resolve: () => Promise.reject(new Error('live resolution asked for a confident registry match')),
} as unknown as MerchantResolver;

let db: TestDatabase;
let lookup: ChargeLookup;

beforeAll(async () => {
  db = await createTestDatabase('sqlite');
  const brands = new BrandMatcher(loadBrands());
  const declarations = new DescriptorDeclarations({ db: db.handle.db, brands, now: () => new Date() });
  lookup = new ChargeLookup({ brands, declarations, resolver: neverAsked });
});
afterAll(() => db.drop());

describe('card charge lookup answers', () => {
  it('keep nothing for a line seen once, and give a line that comes back one frozen answer', async () => {
    const line = 'POS PURCHASE STARBUCKS STORE 11234 SEATTLE WA';
    const first = await lookup.lookup(line);
    // Seen once: a fresh answer nothing keeps, so the operation layer checks it and keeps nothing.
    expect(Object.isFrozen(first)).toBe(false);
    expect(first.matches[0]).toMatchObject({ domain: 'starbucks.com', source: 'registry' });

    const second = await lookup.lookup(line);
    expect(Object.isFrozen(second)).toBe(true);
    expect(second).toEqual(first);
    // From then on the same object: its output contract is checked once and its JSON made once.
    expect(await lookup.lookup(line)).toBe(second);
  });
});
