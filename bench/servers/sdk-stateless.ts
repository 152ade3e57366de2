/**
 * The MCP SDK's stateless example, for comparison: a new McpServer and transport per POST, serving
 * the same lookup_card_charge tool over the same matcher. Not used by the service.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { loadBrands } from '../../servers/features/charges/brand-registry.ts';
import { BrandMatcher } from '../../servers/features/charges/matcher.ts';
import { ChargeLookupInput, ChargeLookupResult } from '../../servers/features/charges/schemas.ts';

const matcher = new BrandMatcher(loadBrands());
const app = express();
app.use(express.json());
app.post('/mcp', async (req, res) => {
  const server = new McpServer({ name: 'sdk-stateless', version: '1.0.0' });
  server.registerTool(
    'lookup_card_charge',
    { description: 'lookup', inputSchema: ChargeLookupInput.shape, outputSchema: ChargeLookupResult.shape },
    async ({ charge }) => {
      const result = matcher.lookup(charge);
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
