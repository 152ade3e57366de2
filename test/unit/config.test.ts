import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, mcpAllowedHosts } from '../../servers/config.ts';

describe('configuration', () => {
  it('derives every URL of the URL map from the defaults', () => {
    const config = loadConfig({ env: {} });
    expect(config.site_url).toBe('http://localhost:8787');
    expect(config.base_url).toBe('http://localhost:8787/cs');
    expect(config.public_api_url).toBe('http://localhost:8787/api/public');
    expect(config.mcp_url).toBe('http://localhost:8787/mcp');
    expect(config.auth_url).toBe('http://localhost:8787/auth/v1');
    expect(config.functions_url).toBe('http://localhost:8787/functions/v1');
    expect(config.database_url).toBeNull();
  });

  it('lets the environment override keys, and derived URLs follow PORT and SITE_URL', () => {
    expect(loadConfig({ env: { PORT: '9000' } }).base_url).toBe('http://localhost:9000/cs');
    const config = loadConfig({
      env: {
        SITE_URL: 'https://agents.example.com/',
        MCP_URL: 'https://mcp.example.com',
        LOG_LEVEL: 'debug',
      },
    });
    expect(config.site_url).toBe('https://agents.example.com');
    expect(config.public_api_url).toBe('https://agents.example.com/api/public');
    expect(config.mcp_url).toBe('https://mcp.example.com');
    expect(config.log_level).toBe('debug');
    expect(mcpAllowedHosts(config)).toEqual(['mcp.example.com']);
  });

  it('reports every problem at once, naming the key and where the value came from', () => {
    let error: unknown;
    try {
      loadConfig({
        env: {
          PORT: 'eighty',
          SITE_URL: 'ftp://x',
          DATABASE_URL: 'mysql://db',
          LOG_LEVEL: 'loud',
          OUTBOUND_ALLOW_PRIVATE: 'maybe',
        },
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const fragment of [
      'port:',
      '[from environment PORT]',
      'site_url:',
      '[from environment SITE_URL]',
      'database_url:',
      'log_level:',
      'outbound.allow_private_networks:',
    ]) {
      expect(problems).toContain(fragment);
    }
  });

  it('refuses unknown keys in the file', () => {
    expect(() =>
      loadConfig({ env: {}, overrides: { smtp: { url: null, from: 'a@b.c', password: 'x' } } }),
    ).toThrow(/smtp: .*password/);
  });
});
