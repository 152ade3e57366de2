/**
 * Fixture sites' home pages for the WebMCP check (`fixture-sites.ts` kinds `webmcp*`), run by the
 * scanner's headless Chromium:
 * - `webmcpTools`: tools registered every way the draft and its earlier form allow
 *   (`document.modelContext.registerTool`, `navigator.modelContext.provideContext`, a script file,
 *   a `<form toolname>`), and one registered with an AbortSignal and withdrawn;
 * - `webmcpBroken`: one valid tool and three the draft refuses or an agent cannot call;
 * - `webmcpPrivate`: a tool, then requests to a private address (the same port on 127.0.0.2), the
 *   cloud metadata address and a WebSocket, which the scan must refuse;
 * - `webmcpHang`: a tool, then a script that never arrives (the page never finishes loading);
 * - `webmcpSpin`: a tool, then a script that never yields.
 */
import type http from 'node:http';

type Route = (req: http.IncomingMessage, res: http.ServerResponse, site: { origin: string }) => void;

const html = (head: string, body = '<h1>Example Widgets</h1><p>Widgets for people and agents.</p>') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Example Widgets</title>${head}</head><body>${body}</body></html>`;

const serve =
  (contentType: string, body: string): Route =>
  (_req, res) =>
    res.writeHead(200, { 'content-type': contentType }).end(body);

const tool = (name: string, schema: unknown, extra = '') =>
  `{ name: ${JSON.stringify(name)}, description: 'Does ${name} for the visitor', inputSchema: ${JSON.stringify(schema)}, execute: async () => ({ content: [] })${extra} }`;

const objectSchema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };

export const webmcpTools: Record<string, Route> = {
  '/': serve(
    'text/html; charset=utf-8',
    html(
      `<script>
document.modelContext.registerTool(${tool('search_widgets', objectSchema)});
navigator.modelContext.provideContext({ tools: [${tool('get_cart', { type: 'object', properties: {} })}] });
</script><script src="/tools.js"></script>`,
      `<h1>Example Widgets</h1><form toolname="contact_us" tooldescription="Sends the shop a message">
<label for="m">Your message</label><input id="m" name="message" required>
<select name="topic" toolparamdescription="What the message is about"><option value="order">Order</option><option value="other">Other</option></select>
<button type="submit">Send</button></form>`,
    ),
  ),
  '/tools.js': serve(
    'text/javascript',
    `const withdrawn = new AbortController();
document.modelContext.registerTool(${tool('track_order', objectSchema)});
document.modelContext.registerTool(${tool('temporary', objectSchema)}, { signal: withdrawn.signal });
withdrawn.abort();`,
  ),
};

export const webmcpBroken: Record<string, Route> = {
  '/': serve(
    'text/html; charset=utf-8',
    html(`<script>
const mc = document.modelContext;
mc.registerTool(${tool('lookup', objectSchema)});
mc.registerTool({ name: 'bad name!', description: '' });
mc.registerTool(${tool('scalar_input', { type: 'string' })});
mc.registerTool(${tool('nonsense_schema', { type: 'object', properties: { q: { type: 'nonsense' } } })});
</script>`),
  ),
};

export const webmcpPrivate: Record<string, Route> = {
  '/': serve(
    'text/html; charset=utf-8',
    html(`<script>
document.modelContext.registerTool(${tool('probe', objectSchema)});
const privateOrigin = 'http://127.0.0.2:' + location.port;
fetch(privateOrigin + '/secret').catch(() => {});
fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});
try { new WebSocket('ws://127.0.0.2:' + location.port + '/socket'); } catch {}
const script = document.createElement('script');
script.src = privateOrigin + '/x.js';
document.head.append(script);
</script>`),
  ),
};

export const webmcpHang: Record<string, Route> = {
  '/': serve(
    'text/html; charset=utf-8',
    html(`<script>document.modelContext.registerTool(${tool('early', objectSchema)});</script>
<script src="/never.js"></script>
<script>document.modelContext.registerTool(${tool('late', objectSchema)});</script>`),
  ),
  // Headers and no body, ever: the script element waits, and so does the load event.
  '/never.js': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.write('// ');
  },
};

export const webmcpSpin: Record<string, Route> = {
  '/': serve(
    'text/html; charset=utf-8',
    html(`<script>document.modelContext.registerTool(${tool('before_spin', objectSchema)});
for (;;) {}</script>`),
  ),
};
