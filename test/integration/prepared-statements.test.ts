/**
 * db/prepared.ts on both dialects: a shape compiled once answers for every later value, and a
 * builder whose SQL could not be replayed with other values is refused on its first run.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, prepared } from '../../db/prepared.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/databases.ts';

const channel = (domain: string, email: string | null) => ({
  brand_domain: domain,
  webhook_url: null,
  webhook_secret: null,
  email,
  created_at: '2026-11-26T19:00:00.000Z',
  updated_at: '2026-11-26T19:00:00.000Z',
});

describe.each(dialects)('prepared statements (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
  });

  const emailOf = prepared('test: channel email', (db, domain: string) =>
    db.selectFrom('brand_channels').select(['brand_domain', 'email']).where('brand_domain', '=', domain),
  );

  it('inserts rows of one, then of two, each shape with its own values, inside transactions and out', async () => {
    const { db } = database.handle;
    await insertRows(db, 'brand_channels', [channel('a.example', 'a@a.example')]);
    await insertRows(db, 'brand_channels', [channel('b.example', null)]);
    await db.transaction().execute(async (trx) => {
      await insertRows(trx, 'brand_channels', [
        channel('c.example', 'c@c.example'),
        channel('d.example', null),
      ]);
      await insertRows(trx, 'brand_channels', [
        channel('e.example', 'e@e.example'),
        channel('f.example', 'f@'),
      ]);
    });
    const rows = await db
      .selectFrom('brand_channels')
      .select(['brand_domain', 'email'])
      .orderBy('brand_domain')
      .execute();
    expect(rows).toEqual([
      { brand_domain: 'a.example', email: 'a@a.example' },
      { brand_domain: 'b.example', email: null },
      { brand_domain: 'c.example', email: 'c@c.example' },
      { brand_domain: 'd.example', email: null },
      { brand_domain: 'e.example', email: 'e@e.example' },
      { brand_domain: 'f.example', email: 'f@' },
    ]);
  });

  it('answers each run with its own values', async () => {
    const { db } = database.handle;
    expect(await emailOf.first(db, 'a.example')).toEqual({ brand_domain: 'a.example', email: 'a@a.example' });
    expect(await emailOf.first(db, 'e.example')).toEqual({ brand_domain: 'e.example', email: 'e@e.example' });
    expect(await emailOf.first(db, 'nowhere.example')).toBeUndefined();
    expect(await db.transaction().execute((trx) => emailOf.all(trx, 'b.example'))).toEqual([
      { brand_domain: 'b.example', email: null },
    ]);
  });

  it('refuses a builder with a value of its own, a value used twice, or rows naming other columns', async () => {
    const { db } = database.handle;
    const ownValue = prepared('test: own value', (db, domain: string) =>
      db
        .selectFrom('brand_channels')
        .select('email')
        .where('brand_domain', '=', domain)
        .where('email', '=', 'x'),
    );
    await expect(ownValue.first(db, 'a.example')).rejects.toThrow(/not exactly the values given/);
    const twice = prepared('test: twice', (db, domain: string) =>
      db
        .selectFrom('brand_channels')
        .select('email')
        .where('brand_domain', '=', domain)
        .where('email', '=', domain),
    );
    await expect(twice.first(db, 'a.example')).rejects.toThrow(/not exactly the values given/);
    const { email: _, ...noEmail } = channel('g.example', null);
    await expect(
      insertRows(db, 'brand_channels', [
        channel('g.example', null),
        { ...noEmail, webhook_url: 'https://g.example' },
      ]),
    ).rejects.toThrow(/same columns|undefined/);
    // A literal in the SQL is not a value: this one is prepared.
    const literal = prepared('test: literal', (db, domain: string) =>
      db.selectFrom('brand_channels').select(sql<number>`1`.as('one')).where('brand_domain', '=', domain),
    );
    expect(await literal.first(db, 'a.example')).toEqual({ one: 1 });
    expect(await literal.first(db, 'nowhere.example')).toBeUndefined();
    // Another query of the same name keeps its own SQL.
    const sameName = prepared('test: literal', (db, domain: string) =>
      db.selectFrom('brand_channels').select('email').where('brand_domain', '=', domain),
    );
    expect(await sameName.first(db, 'a.example')).toEqual({ email: 'a@a.example' });
  });
});
