/**
 * Frozen: never edit a migration that has shipped; add a new one.
 * Row-level security for the owner-scoped reads (`db/scoped.ts`), PostgreSQL only: a NOLOGIN role
 * the owner queries switch to with `SET LOCAL ROLE`, allowed to read the account-owned tables of
 * this schema and, through policies, only the rows of the account named by the transaction-local
 * setting `app.account_id`. RLS is enabled, not forced: the service's own connection owns the
 * tables and keeps reading them unrestricted; only the reader role is filtered.
 * SQLite has neither roles nor policies; there the scoped query layer is the guarantee.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Roles are cluster-wide: every schema (deployment, test suite) shares this one. */
const ROLE = 'agent_service_owner_reader';

/** The account of the current transaction; NULL (no row passes) when it was never set or is empty. */
const ACCOUNT = `nullif(current_setting('app.account_id', true), '')::uuid`;

const ownSite = (column: string) =>
  `exists (select 1 from sites s where s.id = ${column} and s.account_id = ${ACCOUNT})`;

/** Each account-owned table and the condition a row must meet to be the current account's. */
const policies: [table: string, using: string][] = [
  ['sites', `account_id = ${ACCOUNT}`],
  ['scans', `account_id = ${ACCOUNT}`],
  [
    'scan_findings',
    `exists (select 1 from scans sc where sc.id = scan_findings.scan_id and sc.account_id = ${ACCOUNT})`,
  ],
  ['traffic_events', ownSite('traffic_events.site_id')],
  ['traffic_daily', ownSite('traffic_daily.site_id')],
  ['traffic_pages_daily', ownSite('traffic_pages_daily.site_id')],
  ['traffic_hourly', ownSite('traffic_hourly.site_id')],
  ['traffic_site_sources', ownSite('traffic_site_sources.site_id')],
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are typed loosely (kysely recommendation)
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // Two schemas migrating at once may both try to create the role: the loser sees either error.
  await sql
    .raw(`do $$ begin
      create role ${ROLE} nologin;
    exception when duplicate_object or unique_violation then null;
    end $$`)
    .execute(db);
  // The connecting user must be a member to SET ROLE (a superuser already is).
  await sql
    .raw(`do $$ begin
      if not pg_has_role(current_user, '${ROLE}', 'member') then
        execute format('grant %I to %I', '${ROLE}', current_user);
      end if;
    end $$`)
    .execute(db);
  await sql
    .raw(`do $$ begin
      execute format('grant usage on schema %I to ${ROLE}', current_schema());
    end $$`)
    .execute(db);
  for (const [table, using] of policies) {
    await sql.raw(`grant select on ${table} to ${ROLE}`).execute(db);
    await sql.raw(`alter table ${table} enable row level security`).execute(db);
    await sql
      .raw(`create policy ${table}_owner_read on ${table} for select to ${ROLE} using (${using})`)
      .execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const [table] of policies) {
    await sql.raw(`drop policy ${table}_owner_read on ${table}`).execute(db);
    await sql.raw(`alter table ${table} disable row level security`).execute(db);
    await sql.raw(`revoke select on ${table} from ${ROLE}`).execute(db);
  }
  await sql
    .raw(`do $$ begin
      execute format('revoke usage on schema %I from ${ROLE}', current_schema());
    end $$`)
    .execute(db);
}
