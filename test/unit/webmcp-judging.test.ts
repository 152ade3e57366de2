/**
 * How the shim's reports become the page's tools and how each tool is judged against the WebMCP
 * draft (`collectors/webmcp.ts`), without a browser; and the service's own `/webmcp.js` tools,
 * which must pass that judgement.
 */
import { describe, expect, it } from 'vitest';
import { webmcpTools } from '../../servers/adapters/webmcp-tools.ts';
import { loadConfig } from '../../servers/config.ts';
import { schemaProblem, toolsOf, type WebMcpReport } from '../../servers/features/scans/collectors/webmcp.ts';
import { operations } from '../../servers/registry.ts';

const register = (
  name: string,
  extra: Partial<Extract<WebMcpReport, { op: 'register' }>> = {},
): WebMcpReport => ({
  op: 'register',
  via: 'document',
  name,
  title: null,
  description: `Does ${name}`,
  schema: JSON.stringify({ type: 'object', properties: {} }),
  schema_error: null,
  has_execute: true,
  read_only: false,
  ...extra,
});

describe('WebMCP reports folded into tools', () => {
  it('keeps the first of two tools of one name, and says it was registered twice', () => {
    const tools = toolsOf([register('a'), register('a', { description: 'again' })]);
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ description: 'Does a', problems: ['registered twice'] });
  });

  it('provideContext and clearContext reset the navigator tools only; unregister removes one', () => {
    const tools = toolsOf([
      register('on_document'),
      register('on_navigator', { via: 'navigator' }),
      register('provided', { via: 'provideContext' }),
      register('declared', { via: 'form' }),
      { op: 'clear' },
      register('provided_again', { via: 'provideContext' }),
      register('withdrawn'),
      { op: 'unregister', name: 'withdrawn' },
    ]);
    expect(tools.map((t) => t.name)).toEqual(['on_document', 'declared', 'provided_again']);
  });

  it('names what breaks the draft', () => {
    const [tool] = toolsOf([
      register('x'.repeat(129), { description: ' ', has_execute: false, schema: '{"type":"object"' }),
    ]);
    expect(tool?.problems).toEqual([
      'name is not 1-128 letters, digits, "_", "-" or "." (the draft rejects it)',
      'description is empty (the draft rejects it)',
      'no execute function',
      'inputSchema is not JSON',
    ]);
    const [unserializable] = toolsOf([
      register('y', { schema: null, schema_error: 'inputSchema does not serialize to JSON' }),
    ]);
    expect(unserializable?.problems).toEqual(['inputSchema does not serialize to JSON']);
  });

  it('an input schema must be a JSON Schema of an object', () => {
    expect(schemaProblem({ type: 'object', properties: { q: { type: 'string' } } })).toBeNull();
    expect(schemaProblem([])).toMatch(/not a JSON Schema object/);
    expect(schemaProblem({ type: 'array' })).toMatch(/does not describe an object/);
    expect(schemaProblem({ type: 'object', properties: { q: { type: 'nonsense' } } })).toMatch(
      /not valid JSON Schema/,
    );
    expect(schemaProblem({ type: 'object', required: 'q' })).toMatch(/not valid JSON Schema/);
    // The same `$id` on two pages is judged twice alike (ajv's cache does not keep it).
    const withId = { $id: 'https://example.com/s', type: 'object' };
    expect(schemaProblem(withId)).toBeNull();
    expect(schemaProblem({ ...withId })).toBeNull();
  });
});

describe("the service's own WebMCP tools", () => {
  it('are the free public reads of the MCP server, each passing the check', () => {
    const config = loadConfig({ env: {} });
    const tools = webmcpTools(operations, config);
    expect(tools.length).toBeGreaterThan(5);
    const reports = tools.map((t) =>
      register(t.name, { title: t.title, description: t.description, schema: JSON.stringify(t.inputSchema) }),
    );
    expect(toolsOf(reports).flatMap((t) => t.problems.map((p) => `${t.name}: ${p}`))).toEqual([]);
    for (const tool of tools) {
      const op = operations.find((o) => o.toolName === tool.name);
      expect(op?.access, tool.name).toBe('public');
      expect(op?.sku, tool.name).toBeUndefined();
      expect(op?.http?.method, tool.name).toBe('GET');
    }
  });
});
