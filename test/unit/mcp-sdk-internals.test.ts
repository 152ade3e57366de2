/**
 * The MCP adapter's fast path reaches into two unpublished members of the SDK's Protocol
 * (`servers/adapters/mcp.ts`, `MultiplexTransport.bindDirect`). This pins them: an SDK upgrade that
 * renames them fails here, loudly, instead of silently slowing every tool call.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { describe, expect, it } from 'vitest';
import { MultiplexTransport } from '../../servers/adapters/mcp.ts';

describe('MCP SDK internals the adapter relies on', () => {
  it('binds the transport straight to Protocol._onrequest and _onnotification', async () => {
    const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
    const transport = new MultiplexTransport();
    await server.connect(transport);
    expect(transport.bindDirect(server)).toBe(true);
    await server.close();
  });
});
