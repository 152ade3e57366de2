/**
 * The paid SKU catalog (SPEC "Paid SKU catalog entry"), projected from the registry like the routes
 * and tools (STYLE.md 2): every operation that sells a SKU is an entry, priced from its `sku`, with
 * its inputs described from the same JSON Schema as its OpenAPI entry and MCP tool. Two views:
 *
 * - the snapshot, `GET {public_api_url}/catalog`: `snapshot: true`, `updated` = when its content last
 *   changed (kept in `catalog_snapshots`, so every process and restart serving the same content says
 *   the same time; it moves only when the content does);
 * - the live catalog, `GET {functions_url}/catalog` and the public MCP tool `get_catalog`:
 *   `snapshot: false`, `updated` = now, and per SKU whether this deployment can sell it now
 *   (`available`, and `unavailable_reason` when not) - the answer `invokeOperation` gives. An agent
 *   about to buy asks the live one; the snapshot is the document to cache and compare.
 *
 * `catalogDocument` is a pure function of (operations, config, view).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../db/schema.ts';
import { type Config, serviceName } from '../config.ts';
import { SpotlightPlacement } from '../features/catalog/spotlight/placements.ts';
import { type JsonSchema, jsonSchemaOf } from '../json-schema.ts';
import {
  type AnyOperation,
  defineOperation,
  pathParamsOf,
  SERVICE_KEY_HEADER,
  skuUnavailableReason,
} from '../operation.ts';
import type { OperationServices } from '../operation-services.ts';
import type { ProviderStatus } from '../outbound/search.ts';
import { surfaceUrl } from './openapi.ts';

/** SPEC "SKUs and their inputs": the order of its table, which the catalog keeps. */
export const SKU_ORDER = [
  'featured-bid',
  'spotlight',
  'boost',
  'signal',
  'scan',
  'people-search',
  'entity',
  'llms-txt',
  'soul-write',
  'embodiment',
] as const;

/** USDC on Base mainnet (Circle's contract; x402's `exact` scheme on `eip155:8453`). */
export const USDC_ON_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

export const CatalogPayment = z
  .object({
    protocol: z.literal('x402'),
    network: z.literal('base'),
    asset: z.literal('USDC'),
    asset_address: z.string().describe('The USDC token contract the payment is made in.'),
  })
  .describe('How a SKU is paid: x402, in USDC on base.');

export const CatalogSku = z.object({
  sku: z.string().describe('SKU id, also the last segment of its endpoint.'),
  title: z.string(),
  description: z.string().describe('What the SKU delivers.'),
  price_usdc: z
    .number()
    .describe('Price in USDC; for SKUs whose amount the caller sets (featured-bid, boost), the minimum.'),
  endpoint: z
    .string()
    .describe('Path of the endpoint (POST with a JSON body, or GET with query parameters).'),
  url: z.string().describe('Absolute URL of the endpoint.'),
  input_schema: z
    .record(z.string(), z.string())
    .describe('Input name -> its type and rules, such as "string, required" or "number, minimum 1.00".'),
  payment: CatalogPayment,
});
export type CatalogSku = z.infer<typeof CatalogSku>;

export const LiveCatalogSku = CatalogSku.extend({
  available: z.boolean().describe('Whether this deployment sells the SKU now.'),
  unavailable_reason: z.string().optional().describe('Why not, when available is false.'),
  providers: z
    .array(
      z.object({
        kind: z.enum(['search', 'llm']).describe('search: web search; llm: a language model.'),
        name: z.string(),
        configured: z.boolean(),
        reason: z.string().optional().describe('Why not, when configured is false.'),
      }),
    )
    .optional()
    .describe(
      'The outside providers this SKU calls and which are configured here (SKUs that call none omit it).',
    ),
  current_minimum_usdc: z
    .number()
    .optional()
    .describe(
      'The lowest amount accepted right now when it moves with demand: for featured-bid, the minimum next ' +
        "daily bid (the holder's daily bid plus 0.01, or 1.00 while the slot is free).",
    ),
});
export type LiveCatalogSku = z.infer<typeof LiveCatalogSku>;

export const Attribution = z
  .object({
    site: z.string().describe('The site to credit.'),
    attribution: z.string().describe('Credit line, as text.'),
    attribution_html: z.string().describe('Credit line, as an HTML link.'),
  })
  .describe('How to credit this service when showing its data.');

const documentFields = {
  updated: z.string().describe('ISO 8601.'),
  free_endpoints: z
    .array(z.string())
    .describe(
      'The free endpoints of the public API: method and path relative to api_base, then "?name" for each ' +
        'required query parameter and the header name when the endpoint needs one (x-service-key).',
    ),
  attribution: Attribution,
  api_base: z.string().describe('Base URL of the public API.'),
  live_endpoint: z.string().describe('URL of the live catalog.'),
};

export const Catalog = z.object({
  updated: documentFields.updated.describe('ISO 8601 time the content of this snapshot last changed.'),
  free_endpoints: documentFields.free_endpoints,
  skus: z.array(CatalogSku),
  attribution: documentFields.attribution,
  api_base: documentFields.api_base,
  live_endpoint: documentFields.live_endpoint,
  snapshot: z.literal(true),
});
export type Catalog = z.infer<typeof Catalog>;

export const LiveCatalog = z.object({
  updated: documentFields.updated.describe('ISO 8601 time of this answer.'),
  free_endpoints: documentFields.free_endpoints,
  skus: z.array(LiveCatalogSku),
  spotlight: z
    .array(SpotlightPlacement)
    .describe('Sponsored: the spotlight placements shown now (spotlight SKU), oldest first.'),
  attribution: documentFields.attribution,
  api_base: documentFields.api_base,
  live_endpoint: documentFields.live_endpoint,
  snapshot: z.literal(false),
});
export type LiveCatalog = z.infer<typeof LiveCatalog>;

/** What a view adds to the content: the snapshot's `updated`, or the time and availability now. */
export type CatalogView =
  | { live: false; updated: string }
  | {
      live: true;
      now: Date;
      unavailableReason: (op: AnyOperation) => string | null;
      providers?: (op: AnyOperation) => ProviderStatus[] | undefined;
      currentMinimum?: (op: AnyOperation) => number | undefined;
      spotlight?: SpotlightPlacement[];
    };

export function catalogDocument(
  operations: readonly AnyOperation[],
  config: Config,
  view: { live: false; updated: string },
): Catalog;
export function catalogDocument(
  operations: readonly AnyOperation[],
  config: Config,
  view: {
    live: true;
    now: Date;
    unavailableReason: (op: AnyOperation) => string | null;
    providers?: (op: AnyOperation) => ProviderStatus[] | undefined;
    currentMinimum?: (op: AnyOperation) => number | undefined;
    spotlight?: SpotlightPlacement[];
  },
): LiveCatalog;
export function catalogDocument(
  operations: readonly AnyOperation[],
  config: Config,
  view: CatalogView,
): Catalog | LiveCatalog {
  const content = catalogContent(operations, config);
  if (!view.live) return { updated: view.updated, ...content, snapshot: true };
  const sold = skuOperations(operations);
  return {
    updated: view.now.toISOString(),
    ...content,
    skus: content.skus.map((entry, i) => {
      const op = sold[i] as AnyOperation;
      const reason = view.unavailableReason(op);
      const providers = view.providers?.(op);
      const minimum = view.currentMinimum?.(op);
      return {
        ...entry,
        ...(reason === null ? { available: true } : { available: false, unavailable_reason: reason }),
        ...(providers ? { providers } : {}),
        ...(minimum === undefined ? {} : { current_minimum_usdc: minimum }),
      };
    }),
    spotlight: view.spotlight ?? [],
    snapshot: false,
  };
}

type CatalogContent = Omit<Catalog, 'updated' | 'snapshot'>;

/** Everything in the snapshot but its time: what `updated` follows. */
export function catalogContent(operations: readonly AnyOperation[], config: Config): CatalogContent {
  const siteUrl = config.site_url;
  return {
    free_endpoints: operations
      .filter((op) => op.http?.surface === 'public_api' && !op.sku)
      .map(freeEndpoint)
      .sort(byPathThenMethod),
    skus: skuOperations(operations).map((op) => catalogEntry(op, config)),
    attribution: {
      site: siteUrl,
      attribution: `Source: ${serviceName} (${siteUrl})`,
      attribution_html: `Source: <a href="${escapeHtml(siteUrl)}">${escapeHtml(serviceName)}</a>`,
    },
    api_base: config.public_api_url,
    live_endpoint: `${config.functions_url}/catalog`,
  };
}

/** SHA-256 (hex) of the content in canonical JSON (RFC 8785): equal content, equal digest. */
export const catalogDigest = (content: CatalogContent): string =>
  createHash('sha256')
    .update(canonicalize(content) ?? '')
    .digest('hex');

/** The operations that sell a SKU, in SPEC table order (SKUs it does not list last, by id). */
function skuOperations(operations: readonly AnyOperation[]): AnyOperation[] {
  const rank = (op: AnyOperation) => {
    const i = (SKU_ORDER as readonly string[]).indexOf(op.sku?.id ?? '');
    return i === -1 ? SKU_ORDER.length : i;
  };
  return operations
    .filter((op) => op.sku)
    .sort((a, b) => rank(a) - rank(b) || (a.sku?.id ?? '').localeCompare(b.sku?.id ?? ''));
}

function catalogEntry(op: AnyOperation, config: Config): CatalogSku {
  const sku = op.sku as NonNullable<AnyOperation['sku']>;
  const http = op.http as NonNullable<AnyOperation['http']>;
  const url = surfaceUrl(config, http.surface) + http.path;
  return {
    sku: sku.id,
    title: op.title,
    description: op.description,
    price_usdc: sku.usdc,
    endpoint: new URL(url).pathname,
    url,
    input_schema: inputSchemaOf(op),
    payment: { protocol: 'x402', network: 'base', asset: 'USDC', asset_address: USDC_ON_BASE },
  };
}

/**
 * `METHOD /path` relative to the public API, then `?name` for each required query parameter
 * (`&`-joined) and, when the operation needs the account's key, its header: `GET /signal?domain`,
 * `GET /pixel x-service-key`, `DELETE /account/keys/{key_id} x-service-key`. Optional parameters and
 * the Bearer token that writes may carry instead (SPEC "Authentication") are not named.
 */
export function freeEndpoint(op: AnyOperation): string {
  const http = op.http as NonNullable<AnyOperation['http']>;
  const inPath = new Set(pathParamsOf(http.path));
  const schema = jsonSchemaOf(op.input, 'input');
  const query =
    http.input === 'query' ? ((schema.required ?? []) as string[]).filter((name) => !inPath.has(name)) : [];
  const path = http.path.replace(/:(\w+)/g, '{$1}');
  return [
    `${http.method} ${path}${query.length ? `?${query.join('&')}` : ''}`,
    ...(op.access === 'service_key' ? [SERVICE_KEY_HEADER] : []),
  ].join(' ');
}

const byPathThenMethod = (a: string, b: string): number => {
  const [am = '', ap = ''] = a.split(' ');
  const [bm = '', bp = ''] = b.split(' ');
  return ap.localeCompare(bp) || am.localeCompare(bm);
};

/** Input name -> its type description, from the JSON Schema the OpenAPI entry and the MCP tool carry. */
export function inputSchemaOf(op: AnyOperation): Record<string, string> {
  const schema = jsonSchemaOf(op.input, 'input');
  const required = new Set((schema.required ?? []) as string[]);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      typeDescription(property, required.has(name)),
    ]),
  );
}

const FORMATS: Record<string, string> = {
  uri: 'URL',
  email: 'email address',
  uuid: 'UUID',
  date: 'date (YYYY-MM-DD)',
  'date-time': 'ISO 8601 date-time',
};

/**
 * A JSON Schema property in the catalog's words (SPEC "SKUs and their inputs"): its type (`string`,
 * `number`, `boolean`, or `one of a, b` for an enumeration; an integer is `number, integer`), then
 * `required` or `optional`, then its rules in a fixed order - `minimum`, `maximum`, decimals,
 * lengths in characters, format - and last its `default`. Bounds of a decimal number are written
 * with two decimals at least, as the SPEC writes amounts (`minimum 1.00`).
 */
export function typeDescription(schema: JsonSchema, required: boolean): string {
  const parts: string[] = [];
  const type = schema.type;
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map(String).join(', ')}`);
  else if (type === 'integer') parts.push('number', 'integer');
  else if (typeof type === 'string') parts.push(type);
  else if (Array.isArray(schema.anyOf)) {
    parts.push((schema.anyOf as JsonSchema[]).map((branch) => String(branch.type ?? 'any')).join(' or '));
  } else parts.push('any');
  parts.push(required ? 'required' : 'optional');
  const number = (n: number) => (type === 'number' ? decimalText(n) : String(n));
  const bound = (value: unknown) =>
    typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
  const minimum = bound(schema.minimum);
  const exclusiveMinimum = bound(schema.exclusiveMinimum);
  const maximum = bound(schema.maximum);
  const exclusiveMaximum = bound(schema.exclusiveMaximum);
  if (minimum !== undefined) parts.push(`minimum ${number(minimum)}`);
  if (exclusiveMinimum !== undefined) parts.push(`more than ${number(exclusiveMinimum)}`);
  if (maximum !== undefined) parts.push(`maximum ${number(maximum)}`);
  if (exclusiveMaximum !== undefined) parts.push(`less than ${number(exclusiveMaximum)}`);
  if (typeof schema.multipleOf === 'number') {
    const decimals = -Math.log10(schema.multipleOf);
    parts.push(
      Number.isInteger(decimals) && decimals > 0
        ? `at most ${decimals} decimals`
        : `multiple of ${schema.multipleOf}`,
    );
  }
  if (typeof schema.minLength === 'number' && schema.minLength > 1) {
    parts.push(`at least ${schema.minLength} characters`);
  }
  if (typeof schema.maxLength === 'number') parts.push(`at most ${schema.maxLength} characters`);
  if (typeof schema.format === 'string') parts.push(FORMATS[schema.format] ?? schema.format);
  if (schema.default !== undefined) {
    parts.push(
      `default ${typeof schema.default === 'string' ? schema.default : JSON.stringify(schema.default)}`,
    );
  }
  return parts.join(', ');
}

/** `1` -> `1.00`, `0.5` -> `0.50`, `0.000001` stays as it is. */
function decimalText(n: number): string {
  const decimals = (String(n).split('.')[1] ?? '').length;
  return n.toFixed(Math.min(20, Math.max(2, decimals)));
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The time the snapshot's content became current: the row of its digest, written when the digest
 * is new, and moved to `now` when another content has been current since (the registry went back
 * to an earlier content). Two processes that meet the same new content at once keep the first
 * time: the second insert finds the row and nothing newer beside it.
 */
export async function snapshotUpdatedAt(db: Kysely<Database>, digest: string, now: Date): Promise<string> {
  const at = now.toISOString();
  const newestOther = db
    .selectFrom('catalog_snapshots as other')
    .select((eb) => eb.fn.max('other.updated_at').as('updated_at'))
    .where('other.digest', '<>', digest);
  await db
    .insertInto('catalog_snapshots')
    .values({ digest, updated_at: at })
    .onConflict((oc) =>
      oc
        .column('digest')
        .doUpdateSet({ updated_at: at })
        .where('catalog_snapshots.updated_at', '<', newestOther),
    )
    .execute();
  const row = await db
    .selectFrom('catalog_snapshots')
    .select('updated_at')
    .where('digest', '=', digest)
    .executeTakeFirstOrThrow();
  return row.updated_at;
}

/**
 * One snapshot per (services, registry): its content cannot change while the process runs, so the
 * database is asked once. A failed attempt is forgotten and the next request asks again.
 */
const snapshots = new WeakMap<OperationServices, WeakMap<readonly AnyOperation[], Promise<Catalog>>>();

export function catalogSnapshot(
  services: OperationServices,
  operations: readonly AnyOperation[],
): Promise<Catalog> {
  let byRegistry = snapshots.get(services);
  if (!byRegistry) {
    byRegistry = new WeakMap();
    snapshots.set(services, byRegistry);
  }
  const known = byRegistry.get(operations);
  if (known) return known;
  const pending = (async () => {
    const content = catalogContent(operations, services.config);
    const updated = await snapshotUpdatedAt(services.db, catalogDigest(content), services.now());
    return catalogDocument(operations, services.config, { live: false, updated });
  })();
  byRegistry.set(operations, pending);
  pending.catch(() => byRegistry.delete(operations));
  return pending;
}

export const CatalogInput = z.strictObject({});

export const getCatalogSnapshot = defineOperation({
  name: 'getCatalogSnapshot',
  title: 'Paid SKU catalog (snapshot)',
  description:
    'The catalog of paid SKUs as a snapshot: per SKU its price in USDC, endpoint and absolute URL, inputs ' +
    'and how to pay (x402, USDC on base), with the free endpoints of the public API. updated changes only ' +
    'when the content does, so it can be cached; live_endpoint serves the same with availability now.',
  input: CatalogInput,
  output: Catalog,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'public_api', method: 'GET', path: '/catalog', input: 'query' },
  tags: ['paid catalog'],
  handler: async (ctx) => catalogSnapshot(ctx.services, ctx.operations),
});

export const getCatalog = defineOperation({
  name: 'getCatalog',
  title: 'Paid SKU catalog, live',
  description:
    'What this service sells and whether it can sell it now: per paid SKU its price in USDC, endpoint and ' +
    'URL, inputs with their types and limits, how to pay (x402, USDC on base), and available (with ' +
    'unavailable_reason when false); also the free endpoints of the public API. Each SKU is also a tool of ' +
    'this server with the same inputs.',
  input: CatalogInput,
  output: LiveCatalog,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  access: 'public',
  http: { surface: 'functions', method: 'GET', path: '/catalog', input: 'query' },
  mcp: ['public'],
  tags: ['paid catalog'],
  handler: async (ctx) => {
    const minimums = new Map<AnyOperation, number>();
    for (const op of ctx.operations) {
      const current = op.sku?.currentMinimum;
      if (current) minimums.set(op, await current(ctx.services));
    }
    return catalogDocument(ctx.operations, ctx.services.config, {
      live: true,
      now: ctx.services.now(),
      unavailableReason: (op) => skuUnavailableReason(op, ctx.services),
      providers: (op) => op.sku?.providers?.(ctx.services),
      currentMinimum: (op) => minimums.get(op),
      spotlight: await ctx.services.spotlights.active(),
    });
  },
});

export const catalogOperations = [getCatalog, getCatalogSnapshot];
