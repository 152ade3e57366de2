/**
 * The one public-address rule (`servers/public-address.ts`, issue 28): which names and URLs it
 * takes, that `parseInput` applies it to every field of every operation that holds a domain or a
 * URL, and that no such field escapes it by not being marked.
 */

import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ServiceError } from '../../servers/errors.ts';
import { type AnyOperation, parseInput } from '../../servers/operation.ts';
import {
  addressPathsOf,
  type DomainPolicy,
  normalizeDomain,
  publicUrlProblem,
} from '../../servers/public-address.ts';
import { operations } from '../../servers/registry.ts';

const publicOnly: DomainPolicy = { allowLocal: false };
const withLocal: DomainPolicy = { allowLocal: true };

/** Every way an attacker has spelled a private or local destination. */
const privateHosts = [
  '127.0.0.1:8080',
  '127.1.2.3',
  'localhost',
  'localhost:3000',
  'localhost.',
  '[::1]:8080',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '0.0.0.0',
  '10.0.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '2130706433',
  '0x7f000001',
  'foo.localhost',
  'printer.local',
  'db.internal',
  'metadata.google.internal',
  'router.lan',
];

describe('the public-address rule', () => {
  it('takes public registrable names, and URLs on them with any port', () => {
    expect(normalizeDomain('Example.COM.', publicOnly)).toEqual({ ok: true, domain: 'example.com' });
    expect(normalizeDomain('https://shop.example.co.uk/page', publicOnly)).toEqual({
      ok: true,
      domain: 'shop.example.co.uk',
    });
    expect(publicUrlProblem('https://shop.example.com:8443/a?b#c', publicOnly)).toBeNull();
    expect(publicUrlProblem('http://example.com/', publicOnly)).toBeNull();
  });

  it('refuses every private or local spelling as a domain and as a URL host', () => {
    for (const host of privateHosts) {
      expect(normalizeDomain(host, publicOnly).ok, host).toBe(false);
      expect(publicUrlProblem(`http://${host}/admin`, publicOnly), host).not.toBeNull();
    }
  });

  it('refuses credentials, other schemes and IP literals even when local names are on', () => {
    expect(publicUrlProblem('https://user:pw@example.com/', withLocal)).toMatch(/credentials/);
    expect(publicUrlProblem('https://example.com@127.0.0.1/', withLocal)).toMatch(/credentials/);
    expect(publicUrlProblem('javascript:alert(1)', withLocal)).not.toBeNull();
    expect(publicUrlProblem('ftp://example.com/', withLocal)).not.toBeNull();
    expect(publicUrlProblem('http://10.0.0.1/', withLocal)).toMatch(/not an IP address/);
    expect(normalizeDomain('8.8.8.8', withLocal).ok).toBe(false);
  });

  it('takes loopback names only under the policy that allows them (tests, self-hosting)', () => {
    expect(normalizeDomain('127.0.0.1:8080', withLocal)).toEqual({ ok: true, domain: '127.0.0.1:8080' });
    expect(normalizeDomain('[::1]:8080', withLocal)).toEqual({ ok: true, domain: '[::1]:8080' });
    expect(publicUrlProblem('http://localhost:8080/x', withLocal)).toBeNull();
    expect(publicUrlProblem('http://localhost:8080/x', publicOnly)).toMatch(/public domain name/);
  });
});

/** The leaf fields of an input schema, by path (objects, wrappers and arrays walked as the rule does). */
function leafPaths(schema: z.ZodType, at: string[] = []): string[][] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  switch (def.type) {
    case 'object':
      return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, field]) =>
        leafPaths(field, [...at, key]),
      );
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
      return leafPaths(def.innerType as z.ZodType, at);
    case 'pipe':
      return leafPaths(def.in as z.ZodType, at);
    case 'array':
      return leafPaths(def.element as z.ZodType, [...at, '*']);
    case 'union':
      return (def.options as z.ZodType[]).flatMap((option) => leafPaths(option, at));
    default:
      return [at];
  }
}

/**
 * Fields that hold a URL the service only calls, never publishes or redirects to - the outbound rule
 * checks them when they are registered and at every connection (`requireCallableDestination`) - or
 * only records: the page a traffic event was on is counted, never linked, fetched or followed. A
 * return request's brand is a registrable name by its own rule (`isRegistrableDomain`): it is a key
 * to the brand's channels, never a link, and nothing is fetched from it but through the safe fetcher.
 */
const NOT_PUBLISHED = new Set([
  'startReturnRequest callback_url',
  'startReturnRequest brand_domain',
  'listBrandRequests brand_domain',
  'registerBrandAgent endpoint',
  'ingestEvents events.*.url',
]);

/** A field whose name says it holds a domain or a URL. */
const ADDRESS_NAME = /(^|_)(domain|url|website|homepage|endpoint|image|link|mcp|a2a|web)$/;

/** An input holding `value` at `path` (arrays get one item). */
function inputAt(path: string[], value: string): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path as [string, ...string[]];
  return key === '*' ? [inputAt(rest, value)] : { [key]: inputAt(rest, value) };
}

describe('every operation', () => {
  const withInput = operations.filter((op) => op.input);

  it('marks every field whose name says it holds a domain or a URL (or calls it only)', () => {
    const unmarked: string[] = [];
    for (const op of withInput) {
      const marked = new Set(addressPathsOf(op.input).map((p) => p.path.join('.')));
      for (const path of leafPaths(op.input)) {
        const name = path.at(-1) ?? '';
        if (!ADDRESS_NAME.test(name) || /_id$/.test(name)) continue;
        const field = path.join('.');
        if (marked.has(field) || NOT_PUBLISHED.has(`${op.name} ${field}`)) continue;
        unmarked.push(`${op.name} ${field}`);
      }
    }
    expect(unmarked).toEqual([]);
  });

  it('refuses a private destination in each marked field, naming it, before any handler runs', () => {
    let fields = 0;
    for (const op of withInput as AnyOperation[]) {
      for (const { path, address } of addressPathsOf(op.input)) {
        for (const host of ['127.0.0.1:8080', '[::1]:8080', 'localhost']) {
          const value = address === 'domain' ? host : `http://${host}/admin`;
          const err = (() => {
            try {
              parseInput(op, inputAt(path, value), publicOnly);
            } catch (e) {
              return e;
            }
            return undefined;
          })();
          const field = path.map((key) => (key === '*' ? '0' : key)).join('.');
          expect(err, `${op.name} ${field} took ${value}`).toBeInstanceOf(ServiceError);
          const named = (err as ServiceError).errors?.find((e) => e.field === field);
          expect(named, `${op.name} ${field} not named for ${value}`).toBeDefined();
        }
        fields++;
      }
    }
    // The placements of issue 28 are among them: featured-bid, spotlight and boost (domain and url).
    expect(fields).toBeGreaterThanOrEqual(20);
  });
});
