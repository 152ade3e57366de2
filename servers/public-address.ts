/**
 * The one public-address rule. Every domain or URL an operation publishes (a featured slot, a
 * spotlight, a listing, a soul's profile), redirects to (a boost's click) or scans is a public name:
 * a registrable domain under an ICANN suffix, never an IP literal, `localhost` or a special-use name
 * (`.local`, `.internal`, `.localhost`...). Only a deployment whose scanner may reach this machine
 * (`localSitesAllowed`: development mode, or `scanner.allow_private_networks` for tests and
 * self-hosting) also takes `localhost[:PORT]`, `127.x.x.x[:PORT]` and `[::1][:PORT]`, so the service
 * itself or a local site can be registered, scanned, verified and placed. Fetching checks the addresses a name resolves to again, at connect time
 * (`outbound/safe-fetch.ts`): a public name may point anywhere tomorrow.
 *
 * Input fields that hold a domain or a URL say so in their schema (`addressField`), and
 * `parseInput` applies this rule to every such field of every operation: a new operation cannot
 * forget it, and no handler decides it for itself (issue 28: two SKUs once did, with local names on).
 */
import { parse } from 'tldts';
import { z } from 'zod';
import { type Config, localSitesAllowed } from './config.ts';
import type { FieldError } from './errors.ts';

export interface DomainPolicy {
  /** `localhost[:PORT]`, `127.x.x.x[:PORT]` and `[::1][:PORT]` are accepted too. */
  allowLocal: boolean;
}

/** The deployment's policy: the scanner's (`localSitesAllowed`), for every operation. */
export const domainPolicyOf = (config: Config): DomainPolicy => ({
  allowLocal: localSitesAllowed(config),
});

export type DomainResult = { ok: true; domain: string } | { ok: false; message: string };

const LOCAL = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::(\d{1,5}))?$/;

export const isLocalDomain = (domain: string): boolean => LOCAL.test(domain);

/** Accepts `example.com`, `https://www.example.com/page` (the host is kept) and trailing dots. */
export function normalizeDomain(raw: string, policy: DomainPolicy): DomainResult {
  let text = raw.trim().toLowerCase();
  if (text.includes('://')) {
    try {
      const url = new URL(text);
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return { ok: false, message: 'must be a domain name' };
      text = url.host;
    } catch {
      return { ok: false, message: 'must be a domain name such as example.com' };
    }
  }
  text = text.replace(/[/?#].*$/, '').replace(/\.$/, '');
  const local = LOCAL.exec(text);
  if (local) return localName(text, local[2], policy);
  if (text.includes(':')) return { ok: false, message: 'must not include a port' };
  return publicName(text);
}

function localName(text: string, port: string | undefined, policy: DomainPolicy): DomainResult {
  if (!policy.allowLocal) return { ok: false, message: 'must be a public domain name' };
  const number = port === undefined ? undefined : Number(port);
  if (number !== undefined && (number < 1 || number > 65535))
    return { ok: false, message: 'has an invalid port' };
  return { ok: true, domain: text };
}

function publicName(text: string): DomainResult {
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname;
  } catch {
    return { ok: false, message: 'must be a domain name such as example.com' };
  }
  const parsed = parse(host);
  if (parsed.isIp || host.startsWith('['))
    return { ok: false, message: 'must be a domain name, not an IP address' };
  if (!parsed.domain || !parsed.isIcann || host.length > 253) {
    return { ok: false, message: 'must be a registrable domain name such as example.com' };
  }
  return { ok: true, domain: host };
}

/**
 * Why `raw` is not a URL this service may publish or redirect to, or null: http(s), no credentials
 * (`https://bank.com@evil.com` reads as the bank), and a host the domain rule accepts - a public
 * name (any port), or a local one under the policy that allows them.
 */
export function publicUrlProblem(raw: string, policy: DomainPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http(s) URL';
  if (url.username || url.password) return 'must not carry credentials (user:password@)';
  const host = url.hostname.replace(/\.$/, '');
  const local = LOCAL.exec(host);
  const result = local ? localName(host, undefined, policy) : publicName(host);
  return result.ok ? null : `host ${result.message}`;
}

/** Why `raw` is not a domain the policy accepts, or null. */
function domainProblem(raw: string, policy: DomainPolicy): string | null {
  const result = normalizeDomain(raw, policy);
  return result.ok ? null : result.message;
}

/** What an input field holds, for the rule: a domain name, or a URL. */
export type AddressKind = 'domain' | 'url';

/**
 * The schemas of fields that hold a domain or a URL. Metadata of a zod registry is inherited by a
 * schema's copies (`.describe()`, `.meta()`), so a field keeps its kind whatever text it adds.
 */
const addressFields = z.registry<{ address: AddressKind }>();

/** Marks a string schema as holding a domain or a URL: `parseInput` applies the rule to it. */
export function addressField<S extends z.ZodType>(schema: S, address: AddressKind): S {
  addressFields.add(schema, { address });
  return schema;
}

/** Where a marked field sits in an input: object keys, `*` for any array item. */
export interface AddressPath {
  path: string[];
  address: AddressKind;
}

const pathsBySchema = new WeakMap<z.ZodType, readonly AddressPath[]>();

/** The marked fields of an input schema (computed once per schema). */
export function addressPathsOf(schema: z.ZodType): readonly AddressPath[] {
  let paths = pathsBySchema.get(schema);
  if (!paths) {
    paths = collectPaths(schema, [], []);
    pathsBySchema.set(schema, paths);
  }
  return paths;
}

/** `within`: the schemas being walked around this one, so a recursive schema ends the walk. */
function collectPaths(schema: z.ZodType, at: string[], within: z.ZodType[]): AddressPath[] {
  const marked = addressFields.get(schema);
  if (marked) return [{ path: at, address: marked.address }];
  if (within.includes(schema)) return [];
  const inner = [...within, schema];
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  switch (def.type) {
    case 'object':
      return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, field]) =>
        collectPaths(field, [...at, key], inner),
      );
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      return collectPaths(def.innerType as z.ZodType, at, inner);
    case 'pipe':
      return collectPaths(def.in as z.ZodType, at, inner);
    case 'array':
      return collectPaths(def.element as z.ZodType, [...at, '*'], inner);
    case 'union':
      return (def.options as z.ZodType[]).flatMap((option) => collectPaths(option, at, inner));
    case 'intersection':
      return [
        ...collectPaths(def.left as z.ZodType, at, inner),
        ...collectPaths(def.right as z.ZodType, at, inner),
      ];
    default:
      return [];
  }
}

/**
 * The rule applied to every marked field of a parsed input: each field that breaks it, named as
 * validation errors name fields. Nothing is walked for inputs without such fields (most of them).
 */
export function addressProblems(schema: z.ZodType, input: unknown, policy: DomainPolicy): FieldError[] {
  const paths = addressPathsOf(schema);
  if (paths.length === 0) return [];
  const problems: FieldError[] = [];
  for (const { path, address } of paths) {
    visit(input, path, 0, [], (value, field) => {
      if (typeof value !== 'string') return;
      const message = address === 'domain' ? domainProblem(value, policy) : publicUrlProblem(value, policy);
      if (message) problems.push({ field: field.join('.'), message });
    });
  }
  return problems;
}

function visit(
  value: unknown,
  path: string[],
  depth: number,
  field: string[],
  check: (value: unknown, field: string[]) => void,
): void {
  if (depth === path.length) {
    check(value, field);
    return;
  }
  const key = path[depth] as string;
  if (key === '*') {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => {
      visit(item, path, depth + 1, [...field, String(i)], check);
    });
    return;
  }
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return;
  visit((value as Record<string, unknown>)[key], path, depth + 1, [...field, key], check);
}
