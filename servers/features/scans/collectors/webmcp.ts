/**
 * WebMCP (W3C Web Machine Learning CG draft, https://webmachinelearning.github.io/webmcp/): the tools
 * a page registers for in-browser agents. The draft's API is `document.modelContext.registerTool(tool,
 * {signal})`; pages written against its earlier form, and the polyfills, use
 * `navigator.modelContext` with `registerTool`, `unregisterTool`, `provideContext({tools})` and
 * `clearContext()` (these two replace and clear the tools registered there); the declarative form marks a `<form>` with `toolname` and `tooldescription`
 * (its controls are the parameters, `toolparamdescription` describing each).
 *
 * `webmcpShim` is injected before any page script runs (`crawl/webmcp.ts`): it stands in for both
 * objects and reports every call to the binding named `WEBMCP_BINDING`, so what was registered is
 * known in the scanner even when the page never finishes loading or its script spins. This module
 * folds those reports into the tools the page ends with and judges each one against the draft.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';

export const WEBMCP_BINDING = '__signalStrengthWebmcp';

/** Tools kept per page, and the longest description and schema kept of each. */
export const MAX_TOOLS = 64;
const MAX_DESCRIPTION = 1000;
const MAX_SCHEMA_CHARS = 16 * 1024;

/** One call the page made, as the shim reports it. */
export type WebMcpReport =
  | {
      op: 'register';
      via: WebMcpTool['via'];
      name: string;
      title: string | null;
      description: string;
      /** `JSON.stringify(inputSchema)`, null when the tool gave none. */
      schema: string | null;
      /** Why the schema could not be serialized (a circular object, a function). */
      schema_error: string | null;
      has_execute: boolean;
      read_only: boolean;
    }
  | { op: 'unregister'; name: string }
  | { op: 'clear' };

export interface WebMcpTool {
  name: string;
  title: string | null;
  description: string;
  /** `document` (the draft), `navigator` (its earlier form), `provideContext`, or a `form`. */
  via: 'document' | 'navigator' | 'provideContext' | 'form';
  read_only: boolean;
  input_schema: unknown;
  /** What breaks the draft's rules; empty for a valid tool. */
  problems: string[];
}

/**
 * The shim, as source for `addInitScript`. Written as plain JavaScript (it runs in the page, where
 * nothing of ours exists) and defensive: a hostile page can call it with anything.
 */
export const webmcpShim = `(() => {
  const report = globalThis[${JSON.stringify(WEBMCP_BINDING)}];
  if (typeof report !== 'function' || globalThis.__signalStrengthWebmcpInstalled) return;
  globalThis.__signalStrengthWebmcpInstalled = true;
  const text = (v, max) => (typeof v === 'string' ? v : v == null ? '' : String(v)).slice(0, max);
  let sent = 0;
  const send = (r) => { if (sent++ < ${MAX_TOOLS * 4}) report(r).catch(() => {}); };
  const describe = (tool, via) => {
    let schema = null, schema_error = null;
    try {
      if (tool && tool.inputSchema !== undefined) {
        schema = JSON.stringify(tool.inputSchema);
        if (schema === undefined) { schema = null; schema_error = 'inputSchema does not serialize to JSON'; }
        else if (schema.length > ${MAX_SCHEMA_CHARS}) { schema = null; schema_error = 'inputSchema is larger than ${MAX_SCHEMA_CHARS} characters'; }
      }
    } catch (e) { schema_error = 'inputSchema does not serialize to JSON (' + text(e && e.message, 200) + ')'; }
    return { op: 'register', via, name: text(tool && tool.name, 200), title: tool && tool.title != null ? text(tool.title, 200) : null,
      description: text(tool && tool.description, ${MAX_DESCRIPTION}), schema, schema_error,
      has_execute: typeof (tool && tool.execute) === 'function', read_only: !!(tool && tool.annotations && tool.annotations.readOnlyHint) };
  };
  class ModelContext extends EventTarget {
    constructor(via) { super(); this.via = via; this.ontoolchange = null; }
    registerTool(tool, options) {
      send(describe(tool, this.via));
      const signal = options && options.signal;
      if (signal && typeof signal.addEventListener === 'function')
        signal.addEventListener('abort', () => send({ op: 'unregister', name: text(tool && tool.name, 200) }));
      return Promise.resolve();
    }
    unregisterTool(name) { send({ op: 'unregister', name: text(name, 200) }); return Promise.resolve(); }
  }
  // The earlier form on navigator: provideContext replaces what was registered there.
  class NavigatorModelContext extends ModelContext {
    provideContext(context) {
      send({ op: 'clear' });
      const tools = context && Array.isArray(context.tools) ? context.tools : [];
      for (const tool of tools.slice(0, ${MAX_TOOLS})) send(describe(tool, 'provideContext'));
    }
    clearContext() { send({ op: 'clear' }); }
  }
  const onDocument = new ModelContext('document');
  const onNavigator = new NavigatorModelContext('navigator');
  Object.defineProperty(Document.prototype, 'modelContext', { configurable: true, get: () => onDocument });
  Object.defineProperty(Navigator.prototype, 'modelContext', { configurable: true, get: () => onNavigator });
  const controlSchema = (el) => {
    const type = (el.getAttribute('type') || '').toLowerCase();
    const s = el.tagName === 'SELECT'
      ? { type: 'string', enum: Array.from(el.options).map((o) => o.value).slice(0, 50) }
      : type === 'number' || type === 'range' ? { type: 'number' }
      : type === 'checkbox' ? { type: 'boolean' } : { type: 'string' };
    const label = el.getAttribute('toolparamdescription') || (el.labels && el.labels[0] ? el.labels[0].textContent : '') || el.getAttribute('aria-description') || '';
    if (label.trim()) s.description = text(label.trim(), 300);
    return s;
  };
  const readForms = () => {
    if (!document.querySelectorAll) return;
    for (const form of Array.from(document.querySelectorAll('form[toolname]')).slice(0, ${MAX_TOOLS})) {
      const properties = {}, required = [];
      for (const el of Array.from(form.elements)) {
        const name = el.getAttribute && el.getAttribute('name');
        if (!name || ['submit', 'button', 'reset', 'hidden'].includes((el.getAttribute('type') || '').toLowerCase())) continue;
        properties[name] = controlSchema(el);
        if (el.required) required.push(name);
      }
      const schema = JSON.stringify({ type: 'object', properties, required });
      send({ op: 'register', via: 'form', name: text(form.getAttribute('toolname'), 200), title: null,
        description: text(form.getAttribute('tooldescription'), ${MAX_DESCRIPTION}),
        schema: schema.length > ${MAX_SCHEMA_CHARS} ? null : schema, schema_error: null, has_execute: true, read_only: false });
    }
  };
  document.addEventListener('DOMContentLoaded', readForms, { once: true });
})();`;

/** The tools the page ends with, in the order first registered: every report applied in turn. */
export function toolsOf(reports: readonly WebMcpReport[]): WebMcpTool[] {
  const tools = new Map<string, WebMcpTool>();
  for (const r of reports) {
    if (r.op === 'clear') {
      // Only navigator.modelContext has provideContext and clearContext; they reset its own tools.
      for (const [name, tool] of tools)
        if (tool.via === 'navigator' || tool.via === 'provideContext') tools.delete(name);
      continue;
    }
    if (r.op === 'unregister') {
      tools.delete(r.name);
      continue;
    }
    const duplicate = tools.has(r.name);
    if (duplicate || tools.size >= MAX_TOOLS) {
      // The draft rejects a second tool of a name already registered; the first one stays.
      const first = tools.get(r.name);
      if (first && !first.problems.includes('registered twice')) first.problems.push('registered twice');
      continue;
    }
    tools.set(r.name, judgeTool(r));
  }
  return [...tools.values()];
}

/** The draft's tool name: 1 to 128 of ASCII letters, digits, `_`, `-` and `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

const ajv = new Ajv2020({ strict: false, validateSchema: true, logger: false });

function judgeTool(r: Extract<WebMcpReport, { op: 'register' }>): WebMcpTool {
  const problems: string[] = [];
  if (!TOOL_NAME.test(r.name))
    problems.push('name is not 1-128 letters, digits, "_", "-" or "." (the draft rejects it)');
  if (!r.description.trim()) problems.push('description is empty (the draft rejects it)');
  if (!r.has_execute) problems.push('no execute function');
  let schema: unknown = null;
  if (r.schema_error) problems.push(r.schema_error);
  else if (r.schema !== null) {
    try {
      schema = JSON.parse(r.schema) as unknown;
      const problem = schemaProblem(schema);
      if (problem) problems.push(problem);
    } catch {
      problems.push('inputSchema is not JSON');
    }
  }
  return {
    name: r.name,
    title: r.title,
    description: r.description,
    via: r.via,
    read_only: r.read_only,
    input_schema: schema,
    problems,
  };
}

/**
 * Why an input schema is unusable, or null: it must be a JSON Schema (2020-12, the dialect of MCP
 * tool schemas) whose root describes an object, as an agent passes the tool one object of arguments.
 */
export function schemaProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return 'inputSchema is not a JSON Schema object';
  const root = schema as Record<string, unknown>;
  if (root.type !== 'object') return 'inputSchema does not describe an object (`type: "object"` at its root)';
  if (!ajv.validateSchema(root)) {
    const first = ajv.errors?.[0];
    return `inputSchema is not valid JSON Schema (${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'})`;
  }
  try {
    ajv.compile(root);
  } catch (err) {
    return `inputSchema does not compile (${(err as Error).message.slice(0, 200)})`;
  } finally {
    // A schema with an `$id` stays in ajv's cache; the next page may use the same one.
    ajv.removeSchema(root);
  }
  return null;
}
