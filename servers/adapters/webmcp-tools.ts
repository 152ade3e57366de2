/**
 * `{site_url}/webmcp.js`: the site's free public reads as WebMCP tools for agents working in a
 * browser (W3C Web Machine Learning CG draft, https://webmachinelearning.github.io/webmcp/). The home
 * page loads it; where the browser offers `document.modelContext` (the draft) or
 * `navigator.modelContext` (its earlier form and the polyfills) each tool is registered there, and
 * its `execute` calls the operation's REST route. Derived from the registry like every other list:
 * the public MCP server's tools that are free GET routes (reads, so `readOnlyHint`), each with the
 * same name, description and input schema as on the MCP server.
 */
import type { Config } from '../config.ts';
import { jsonSchemaOf } from '../json-schema.ts';
import type { AnyOperation } from '../operation.ts';
import { surfaceUrl } from './openapi.ts';

export const WEBMCP_SCRIPT_PATH = '/webmcp.js';

export interface WebMcpToolEntry {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The route's URL with `:param` placeholders, filled from the input; the rest goes in the query. */
  url: string;
}

/** The operations the page offers as tools. */
export function webmcpTools(operations: readonly AnyOperation[], config: Config): WebMcpToolEntry[] {
  return operations
    .filter(
      (op) =>
        op.mcp?.includes('public') &&
        op.access === 'public' &&
        !op.sku &&
        op.http?.method === 'GET' &&
        op.http.input === 'query' &&
        !op.http.redirect,
    )
    .map((op) => ({
      name: op.toolName,
      title: op.title,
      description: op.description,
      inputSchema: jsonSchemaOf(op.input, 'input'),
      url: surfaceUrl(config, op.http?.surface ?? 'public_api') + (op.http?.path ?? ''),
    }));
}

/** The origins the tools call, for the home page's `connect-src`. */
export function webmcpOrigins(operations: readonly AnyOperation[], config: Config): string[] {
  return [...new Set(webmcpTools(operations, config).map((t) => new URL(t.url).origin))];
}

/** The script: plain JavaScript, no dependency, nothing registered where no model context exists. */
export function webmcpScript(operations: readonly AnyOperation[], config: Config): string {
  const tools = webmcpTools(operations, config);
  return `// WebMCP tools of ${config.site_url}: the free public reads, calling the REST API (${config.site_url}/openapi.json).
(() => {
  const context = (typeof document !== 'undefined' && document.modelContext) || (typeof navigator !== 'undefined' && navigator.modelContext);
  if (!context || typeof context.registerTool !== 'function') return;
  const tools = ${JSON.stringify(tools)};
  const urlOf = (template, input) => {
    const query = new URLSearchParams();
    const used = new Set();
    // Path parameters follow a slash (\`/scans/:scan_id\`); the port's colon does not.
    const path = template.replace(/\\/:(\\w+)/g, (_, name) => { used.add(name); return '/' + encodeURIComponent(String(input[name] ?? '')); });
    for (const [key, value] of Object.entries(input || {})) {
      if (used.has(key) || value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value])
        query.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    const q = query.toString();
    return q ? path + '?' + q : path;
  };
  for (const tool of tools) {
    // The draft's registerTool answers a promise (rejected for a name already taken); the earlier form nothing.
    Promise.resolve(context.registerTool({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { readOnlyHint: true },
      execute: async (input) => {
        const res = await fetch(urlOf(tool.url, input || {}), { headers: { accept: 'application/json' } });
        const type = res.headers.get('content-type') || '';
        const body = type.includes('json') ? await res.json() : await res.text();
        if (!res.ok) throw new Error(typeof body === 'string' ? body : (body.detail || body.title || 'HTTP ' + res.status));
        return body;
      },
    })).catch(() => {});
  }
})();
`;
}
