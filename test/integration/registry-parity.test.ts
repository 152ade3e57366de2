/**
 * Registry parity (STYLE.md 2): every operation appears on exactly the surfaces it declares - its
 * REST route, its MCP tool, its OpenAPI entry - with one and the same schema.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { PAID_GET_SUFFIX } from '../../servers/adapters/openapi.ts';
import { ownerMcpInstructions } from '../../servers/app.ts';
import { nextTools } from '../../servers/features/scans/scoring.ts';
import { jsonSchemaOf } from '../../servers/json-schema.ts';
import { type HttpBinding, Surface } from '../../servers/operation.ts';
import { PaymentRequiredDoc } from '../../servers/payments/schemas.ts';
import { checkedOperations, operations as registry } from '../../servers/registry.ts';
import { withTestSku } from '../helpers/paid-operations.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** The registry and a paid operation (the test SKU), so that paid routes and tools are checked too. */
const operations = withTestSku();

/** The HTTP bindings of an operation: a SKU is sold over GET with query parameters too. */
const bindingsOf = (op: (typeof operations)[number]): [HttpBinding, string][] => {
  const http = op.http as HttpBinding;
  return op.sku && http.method !== 'GET'
    ? [
        [http, op.name],
        [{ ...http, method: 'GET', input: 'query' }, `${op.name}${PAID_GET_SUFFIX}`],
      ]
    : [[http, op.name]];
};

// biome-ignore lint/suspicious/noExplicitAny: documents are walked structurally; assertions check the shapes
type Json = Record<string, any>;

describe('registry parity', () => {
  let service: TestService;
  let tools: Json[];
  let instructions: string;
  const documents = new Map<Surface, Json>();

  const surfaceUrl = (surface: Surface) =>
    ({
      cs: service.config.base_url,
      public_api: service.config.public_api_url,
      site: service.config.site_url,
      functions: service.config.functions_url,
    })[surface];

  beforeAll(async () => {
    service = await startTestService(
      'sqlite',
      { 'payments.pay_to': '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' },
      { operations },
    );
    const client = new Client({ name: 'parity', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.config.mcp_url)));
    tools = (await client.listTools()).tools as Json[];
    instructions = client.getInstructions() ?? '';
    await client.close();
    for (const surface of Surface.options) {
      const res = await fetch(`${surfaceUrl(surface)}/openapi.json`);
      expect(res.status).toBe(200);
      documents.set(surface, await res.json());
    }
  });
  afterAll(() => service?.close());

  it('exposes on the public MCP server exactly the operations that declare it, with their schemas', () => {
    const declared = operations.filter((op) => op.mcp?.includes('public'));
    expect(tools.map((t) => t.name).sort()).toEqual(declared.map((op) => op.toolName).sort());
    for (const op of declared) {
      const tool = tools.find((t) => t.name === op.toolName) as Json;
      expect(tool.inputSchema, op.name).toEqual(jsonSchemaOf(op.input, 'input'));
      // A paid tool's isError result carries the x402 PaymentRequired in structuredContent, and so
      // does a read the paying wallet signs in to (x402 sign-in-with-x: the challenge).
      const output = jsonSchemaOf(op.output, 'output');
      const required = op.sku || op.errors?.includes('sign_in_required');
      expect(tool.outputSchema, op.name).toEqual(
        required ? { type: 'object', anyOf: [output, jsonSchemaOf(PaymentRequiredDoc, 'output')] } : output,
      );
      expect(tool._meta?.['x402/price']?.amount_usdc, op.name).toBe(op.sku?.usdc);
      expect(tool.description).toBe(op.description);
      expect(tool.annotations).toMatchObject(op.annotations);
    }
  });

  it("names in the server's instructions exactly the tools it lists, and no other", () => {
    const named = new Set(instructions.match(/\b[a-z]+(?:_[a-z]+)+\b/g));
    const listed = tools.map((t) => t.name as string);
    for (const name of listed) expect(instructions, name).toContain(`${name} (`);
    const toolLike = [...named].filter((word) => operations.some((op) => op.toolName === word));
    expect(toolLike.filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('recommends, in scan results, only operations the registry holds', () => {
    const toolNames = new Set(operations.map((op) => op.toolName));
    for (const name of Object.values(nextTools)) expect(toolNames.has(name), name).toBe(true);
  });

  it('names every owner tool in the owner server instructions', () => {
    const text = ownerMcpInstructions(operations);
    for (const op of operations.filter((o) => o.mcp?.includes('owner')))
      expect(text).toContain(`${op.toolName} (`);
  });

  it('refuses at start an operation that is paid without a price, priced without being paid, or sold where no adapter charges', () => {
    const free = registry.find((op) => op.access === 'public') as (typeof operations)[number];
    const sku = { id: 'signal', example: { domain: 'example.com' }, usdc: 0.1 };
    expect(() => checkedOperations([{ ...free, sku }])).toThrow(/priced SKU exactly when/);
    expect(() => checkedOperations([{ ...free, access: 'paid' }])).toThrow(/priced SKU exactly when/);
    expect(() => checkedOperations([{ ...free, access: 'paid', sku }])).toThrow(/api\/public\/x402\/signal/);
    const http = { surface: 'site', method: 'POST', path: '/api/public/x402/signal', input: 'body' } as const;
    expect(() => checkedOperations([{ ...free, access: 'paid', sku, http, mcp: ['owner'] }])).toThrow(
      /public MCP/,
    );
  });

  it('keeps owner operations (one account’s data, under row-level security) on the owner MCP server only, read-only but for starting a batch of scans', () => {
    const owner = operations.filter((op) => op.access === 'owner');
    expect(owner.map((op) => op.toolName).sort()).toEqual([
      'get_my_scan_batch',
      'get_my_traffic',
      'get_owner_context',
      'list_my_findings',
      'list_my_scans',
      'list_my_sites',
      'start_my_scan_batch',
    ]);
    for (const op of owner) {
      expect(op.http, op.name).toBeUndefined();
      expect(op.mcp, op.name).toEqual(['owner']);
      // The one write: the MCP form of POST /scans/batch, for the token's account (issue 35 item 3).
      expect(op.annotations.readOnlyHint, op.name).toBe(op.toolName !== 'start_my_scan_batch');
      expect(Object.keys(jsonSchemaOf(op.input, 'input').properties ?? {}), op.name).not.toContain(
        'account_id',
      );
    }
    expect(operations.filter((op) => op.mcp?.includes('owner')).every((op) => op.access === 'owner')).toBe(
      true,
    );
    expect(tools.map((t) => t.name)).not.toContain('list_my_sites');
  });

  it('documents in each OpenAPI document exactly the operations of that surface, with the same schemas', () => {
    for (const [surface, doc] of documents) {
      const entries: [string, string, Json][] = Object.entries(doc.paths as Json).flatMap(([path, methods]) =>
        Object.entries(methods as Json).map(
          ([method, entry]) => [path, method, entry as Json] as [string, string, Json],
        ),
      );
      // The site's document is the whole site's: every REST operation of every surface (issue 14).
      const declared = operations.filter((op) =>
        surface === 'site' ? op.http : op.http?.surface === surface,
      );
      expect(entries.map(([, , e]) => e.operationId).sort()).toEqual(
        declared.flatMap((op) => bindingsOf(op).map(([, id]) => id)).sort(),
      );
      for (const [op, http, operationId] of declared.flatMap((o) =>
        bindingsOf(o).map(([binding, id]) => [o, binding, id] as const),
      )) {
        const [, method, entry] = entries.find(([, , e]) => e.operationId === operationId) as [
          string,
          string,
          Json,
        ];
        expect(method).toBe(http.method.toLowerCase());
        const input = jsonSchemaOf(op.input, 'input');
        // Query, path and body fields together must be exactly the operation's input schema.
        const body: Json = entry.requestBody?.content['application/json'].schema;
        expect(body === undefined).toBe(http.input === 'query');
        const rebuilt: Json = body
          ? { ...body, properties: { ...body.properties }, required: [...(body.required ?? [])] }
          : { type: 'object', properties: {}, additionalProperties: false, required: [] };
        const inputParameters = (entry.parameters ?? []).filter(
          (x: Json) => (x.in === 'query' || x.in === 'path') && !(op.sku && x.name === 'ref'),
        );
        for (const p of inputParameters) {
          rebuilt.properties[p.name] = {
            ...p.schema,
            ...(p.description ? { description: p.description } : {}),
          };
          if (p.required) rebuilt.required.push(p.name);
        }
        rebuilt.required.sort();
        if (!rebuilt.required.length) delete rebuilt.required;
        const expected = {
          ...input,
          ...(input.required ? { required: [...(input.required as string[])].sort() } : {}),
        };
        expect(rebuilt).toEqual(expected);
        if (http.redirect) {
          // A redirect answers 302 with Location, not the output as JSON.
          expect(entry.responses['302'].headers.Location).toBeDefined();
        } else if (http.representation) {
          // A text representation (the fix sheet) answers its media type, not the output as JSON.
          const type = http.representation.contentType.split(';')[0] as string;
          expect(entry.responses[String(http.successStatus ?? 200)].content[type].schema).toEqual({
            type: 'string',
          });
        } else {
          expect(
            entry.responses[String(http.successStatus ?? 200)].content['application/json'].schema,
          ).toEqual(jsonSchemaOf(op.output, 'output'));
        }
        expect(entry['x-mcp-tool']).toBe(op.mcp?.length ? op.toolName : undefined);
      }
    }
  });

  it('routes every HTTP operation at its declared method and path, and no other method', async () => {
    for (const op of operations) {
      if (!op.http) continue;
      for (const [http] of bindingsOf(op)) {
        const url = `${surfaceUrl(http.surface)}${http.path}`;
        const res = await fetch(url, {
          method: http.method,
          ...(http.input === 'body' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
        });
        const body = await res.json();
        expect(body.code, `${http.method} ${url}`).not.toBe('route_not_found');
        expect(res.status, `${http.method} ${url}`).not.toBe(405);
      }
      const wrong = await fetch(`${surfaceUrl(op.http.surface)}${op.http.path}`, { method: 'PATCH' });
      expect(wrong.status).toBe(405);
    }
  });

  it('serves valid OpenAPI 3.1.0 documents, the same in JSON and YAML; the customer service agent is version 1.0.0', async () => {
    const validator = new Validator();
    for (const [surface, doc] of documents) {
      const result = await validator.validate(doc);
      expect(result.errors ?? [], surface).toEqual([]);
      expect(result.valid).toBe(true);
      expect(doc.openapi).toBe('3.1.0');
      const yaml = await (await fetch(`${surfaceUrl(surface)}/openapi.yaml`)).text();
      expect(parseYaml(yaml)).toEqual(doc);
    }
    expect(documents.get('cs')?.info.version).toBe('1.0.0');
    expect(documents.get('cs')?.servers).toEqual([{ url: service.config.base_url }]);
  });
});
