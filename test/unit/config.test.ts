import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  envBindings,
  loadConfig,
  localSitesAllowed,
  mcpAllowedHosts,
  productionChecks,
  projectRoot,
  type TrustedTransmitter,
} from '../../servers/config.ts';
import { childEnv } from '../helpers/process.ts';

describe('configuration', () => {
  it('documents every environment variable in docs/reference/configuration.md, and every key has a default', () => {
    const page = readFileSync(path.join(projectRoot, 'docs/reference/configuration.md'), 'utf8');
    const rows = page.split('\n').filter((line) => line.startsWith('|'));
    for (const name of Object.keys(envBindings)) {
      expect(
        rows.some((row) => row.includes(`\`${name}\``)),
        `${name} in docs/reference/configuration.md`,
      ).toBe(true);
    }
    // mcp.config.json holds a default for every key: loading it with no environment is valid.
    expect(() => loadConfig({ env: {} })).not.toThrow();
  });

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
    expect(loadConfig({ env: {} }).database_pool_size).toBe(10);
    expect(loadConfig({ env: { DATABASE_POOL_SIZE: '25' } }).database_pool_size).toBe(25);
  });

  it('reads trusted transmitters from AUTH_TRUSTED_TRANSMITTERS with defaults, and names each bad member', () => {
    const config = loadConfig({
      env: {
        AUTH_TRUSTED_TRANSMITTERS: JSON.stringify([
          { issuer: 'https://idp.example.com', jwks_uri: 'https://idp.example.com/jwks.json' },
        ]),
      },
    });
    expect(config.auth.trusted_transmitters).toEqual([
      {
        issuer: 'https://idp.example.com',
        jwks_uri: 'https://idp.example.com/jwks.json',
        audience: null,
        push_token: null,
        events: [
          'https://schemas.openid.net/secevent/caep/event-type/session-revoked',
          'https://schemas.openid.net/secevent/caep/event-type/credential-change',
          'https://schemas.openid.net/secevent/caep/event-type/token-claims-change',
        ],
        email_subjects: true,
      },
    ]);
    let error: unknown;
    try {
      loadConfig({
        env: {
          AUTH_TRUSTED_TRANSMITTERS: JSON.stringify([
            { issuer: 'https://a.example', jwks_uri: 'ftp://a.example/jwks', push_token: 'short' },
            { issuer: 'https://a.example', jwks_uri: 'https://a.example/jwks', events: ['urn:x'] },
          ]),
        },
      });
    } catch (err) {
      error = err;
    }
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(
      /auth\.trusted_transmitters\.0\.jwks_uri: .*\[from environment AUTH_TRUSTED_TRANSMITTERS\]/,
    );
    expect(problems).toMatch(/auth\.trusted_transmitters\.0\.push_token/);
    expect(problems).toMatch(/auth\.trusted_transmitters\.1\.events\.0/);
    const production = productionChecks({
      ...config,
      mode: 'production',
      auth: {
        ...config.auth,
        trusted_transmitters: [
          {
            ...(config.auth.trusted_transmitters[0] as TrustedTransmitter),
            jwks_uri: 'http://idp.example.com/jwks',
          },
        ],
      },
    });
    expect(production.problems).toContain(
      'auth.trusted_transmitters.0.jwks_uri: must be an https URL in production',
    );
  });

  it('reports every problem at once, naming the key and where the value came from', () => {
    let error: unknown;
    try {
      loadConfig({
        env: {
          PORT: 'eighty',
          SITE_URL: 'ftp://x',
          DATABASE_URL: 'mysql://db',
          DATABASE_POOL_SIZE: '0',
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
      'database_pool_size:',
      '[from environment DATABASE_POOL_SIZE]',
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

  it('checks the marketplace settings: an operator webhook needs its secret, ad networks their names and secrets', () => {
    expect(loadConfig({ env: {} }).marketplace).toMatchObject({
      spotlight_slots: 12,
      boost_cpm_usdc: 2,
      ad_networks: [],
    });
    expect(() => loadConfig({ env: { EMBODIMENT_WEBHOOK_URL: 'https://robots.example.com/hook' } })).toThrow(
      /marketplace\.embodiment\.webhook_secret/,
    );
    const secret = `whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`;
    const withSecret = loadConfig({
      env: { EMBODIMENT_WEBHOOK_URL: 'https://robots.example.com/hook', EMBODIMENT_WEBHOOK_SECRET: secret },
    });
    expect(withSecret.marketplace.embodiment.webhook_secret).toBe(secret);
    const network = { name: 'adnet', webhook_url: 'https://ads.example.com/hook', secret };
    expect(() =>
      loadConfig({ env: {}, overrides: { 'marketplace.ad_networks': [network, network] } }),
    ).toThrow(/ad_networks/);
    expect(() =>
      loadConfig({ env: {}, overrides: { 'marketplace.ad_networks': [{ ...network, secret: 'plain' }] } }),
    ).toThrow(/ad_networks/);
  });
});

describe('production mode (NODE_ENV=production)', () => {
  const https = {
    NODE_ENV: 'production',
    SITE_URL: 'https://agents.example.com',
    DATABASE_URL: 'postgres://db.example.com/agents',
  };

  it('refuses http URLs and private-network access, all at once, naming each setting', () => {
    let error: unknown;
    try {
      loadConfig({
        env: {
          NODE_ENV: 'production',
          MCP_URL: 'https://mcp.example.com',
          SCAN_ALLOW_PRIVATE: '1',
          OUTBOUND_ALLOW_PRIVATE: '1',
        },
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    for (const key of ['site_url', 'base_url', 'public_api_url', 'auth_url', 'functions_url']) {
      expect(
        problems.some((p) => p.startsWith(`${key}: must be an https URL in production`)),
        key,
      ).toBe(true);
    }
    expect(problems.some((p) => p.startsWith('mcp_url:'))).toBe(false);
    expect(problems.some((p) => p.startsWith('scanner.allow_private_networks:'))).toBe(true);
    expect(problems.some((p) => p.startsWith('outbound.allow_private_networks:'))).toBe(true);
  });

  it('reads trusted identity providers and requires their JWKS over https in production', () => {
    const trusted = { issuer: 'https://idp.example.com', jwks_uri: 'https://idp.example.com/jwks' };
    const config = loadConfig({ env: https, overrides: { 'auth.trusted_issuers': [trusted] } });
    expect(config.auth.trusted_issuers).toEqual([{ ...trusted, trusted_for_email: false }]);
    expect(() =>
      loadConfig({
        env: https,
        overrides: { 'auth.trusted_issuers': [{ ...trusted, jwks_uri: 'http://idp.example.com/jwks' }] },
      }),
    ).toThrow(/auth\.trusted_issuers\.0\.jwks_uri: must be an https URL in production/);
    expect(() =>
      loadConfig({ env: {}, overrides: { 'auth.trusted_issuers': [{ issuer: 'idp', jwks_uri: 'x' }] } }),
    ).toThrow(/auth\.trusted_issuers\.0\.issuer/);
  });

  it('keeps private networks on only with the separate, explicit override', () => {
    expect(() => loadConfig({ env: { ...https, SCAN_ALLOW_PRIVATE: '1' } })).toThrow(ConfigError);
    const config = loadConfig({
      env: { ...https, SCAN_ALLOW_PRIVATE: '1', ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION: '1' },
    });
    expect(config.scanner.allow_private_networks).toBe(true);
  });

  it('reaches local sites in development mode only, unless set deliberately', () => {
    expect(localSitesAllowed(loadConfig({ env: {} }))).toBe(true);
    expect(localSitesAllowed(loadConfig({ env: https }))).toBe(false);
    expect(
      localSitesAllowed(loadConfig({ env: {}, overrides: { 'scanner.allow_local_sites': false } })),
    ).toBe(false);
    // Private networks include this machine.
    expect(
      localSitesAllowed(
        loadConfig({
          env: {},
          overrides: { 'scanner.allow_local_sites': false, 'scanner.allow_private_networks': true },
        }),
      ),
    ).toBe(true);
    expect(() => loadConfig({ env: https, overrides: { 'scanner.allow_local_sites': true } })).toThrow(
      /scanner\.allow_local_sites: lets anyone scan and verify this machine's own addresses/,
    );
    const deliberate = loadConfig({
      env: { ...https, ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION: '1' },
      overrides: { 'scanner.allow_local_sites': true },
    });
    expect(localSitesAllowed(deliberate)).toBe(true);
  });

  it('warns about every default that must change, and about nothing once they are set', () => {
    const defaults = productionChecks(
      loadConfig({ env: { NODE_ENV: 'production', SITE_URL: 'https://localhost' } }),
    );
    expect(defaults.problems).toEqual([]);
    for (const setting of ['SECRETS_KEY', 'TRUST_PROXY', 'SITE_URL', 'DATABASE_URL', 'PAY_TO']) {
      expect(
        defaults.warnings.some((w) => w.includes(setting)),
        setting,
      ).toBe(true);
    }
    const configured = productionChecks(
      loadConfig({
        env: {
          ...https,
          TRUST_PROXY: 'loopback',
          SECRETS_KEY: randomBytes(32).toString('base64'),
          PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        },
      }),
    );
    expect(configured).toEqual({ problems: [], warnings: [] });
    // Development mode checks nothing.
    expect(productionChecks(loadConfig({ env: {} }))).toEqual({ problems: [], warnings: [] });
  });

  it('lists an invalid TRUST_PROXY with the other problems, and exits 78 from npm start', () => {
    expect(loadConfig({ env: { TRUST_PROXY: '10.0.0.0/8, loopback' } }).trust_proxy).toBe(
      '10.0.0.0/8, loopback',
    );
    expect(() => loadConfig({ env: { TRUST_PROXY: 'not-an-address' } })).toThrow(/trust_proxy: must be/);
    const run = spawnSync(
      process.execPath,
      [
        '--experimental-strip-types',
        '--disable-warning=ExperimentalWarning',
        path.join(projectRoot, 'servers/main.ts'),
      ],
      {
        env: {
          ...childEnv(),
          TRUST_PROXY: 'not-an-address',
          SCAN_MAX_PAGES: 'many',
          PORT: '0',
        },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(78);
    expect(run.stderr).toContain('trust_proxy: must be');
    expect(run.stderr).toContain('scanner.max_pages:');
    expect(run.stderr).not.toMatch(/at .*\.ts:\d+/); // a list of problems, not a stack trace
  });
});

describe('secrets keys', () => {
  it('reads SECRETS_KEY from the environment and never from a file', () => {
    const key = randomBytes(32).toString('base64');
    const config = loadConfig({
      env: { SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: randomBytes(32).toString('hex') },
    });
    expect(config.secrets.key?.id).toMatch(/^[\w-]{8}$/);
    expect(config.secrets.previous_keys).toHaveLength(1);
    expect(JSON.stringify(config)).not.toContain(key);
    expect(() => loadConfig({ env: { SECRETS_KEY: 'changeme' } })).toThrow(
      /secrets\.key: must be 32 random bytes/,
    );

    const dir = mkdtempSync(path.join(tmpdir(), 'config-'));
    const file = path.join(dir, 'config.json');
    const defaults = JSON.parse(readFileSync(path.join(projectRoot, 'mcp.config.json'), 'utf8'));
    writeFileSync(file, JSON.stringify({ ...defaults, secrets: { key } }));
    try {
      expect(() => loadConfig({ file, env: {} })).toThrow(/secrets: keys are read from the environment only/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('payments', () => {
  const settlerKey = `0x${'11'.repeat(32)}`;

  it('reads payTo, network, facilitator and chain from the environment, with documented defaults', () => {
    const defaults = loadConfig({ env: {} }).payments;
    expect(defaults).toMatchObject({
      pay_to: null,
      network: 'base',
      facilitator_url: null,
      rpc_url: null,
      settler_private_key: null,
      max_timeout_seconds: 300,
      sync_wait_seconds: 25,
      referral_share: 0.1,
    });
    const config = loadConfig({
      env: {
        PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        PAYMENTS_NETWORK: 'base-sepolia',
        X402_FACILITATOR_URL: 'https://facilitator.example/',
        PAYMENTS_RPC_URL: 'http://127.0.0.1:8545',
      },
    }).payments;
    expect(config).toMatchObject({
      pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      network: 'base-sepolia',
      facilitator_url: 'https://facilitator.example',
      rpc_url: 'http://127.0.0.1:8545',
    });
  });

  it('refuses to start with a payTo that is no EVM address, or an unknown network, naming each', () => {
    let error: unknown;
    try {
      loadConfig({ env: { PAY_TO: 'my-wallet', PAYMENTS_NETWORK: 'solana' } });
    } catch (err) {
      error = err;
    }
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toContain('payments.pay_to: must be an EVM address');
    expect(problems).toContain('[from environment PAY_TO]');
    expect(problems).toContain('payments.network:');
  });

  it('reads the settler key from PAYMENTS_SETTLER_PRIVATE_KEY only, and never prints it', () => {
    const config = loadConfig({ env: { PAYMENTS_SETTLER_PRIVATE_KEY: settlerKey } });
    const key = config.payments.settler_private_key;
    expect(key?.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(JSON.stringify(config)).not.toContain(settlerKey.slice(2));
    expect(inspect(config, { depth: 10 })).not.toContain(settlerKey.slice(2));
    let error: unknown;
    try {
      loadConfig({ env: { PAYMENTS_SETTLER_PRIVATE_KEY: `${settlerKey}ff` } });
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).problems.join('\n')).toContain('payments.settler_private_key: must be');
    expect((error as ConfigError).message).not.toContain(settlerKey.slice(2));

    const dir = mkdtempSync(path.join(tmpdir(), 'config-'));
    const file = path.join(dir, 'config.json');
    const defaults = JSON.parse(readFileSync(path.join(projectRoot, 'mcp.config.json'), 'utf8'));
    writeFileSync(
      file,
      JSON.stringify({ ...defaults, payments: { ...defaults.payments, settler_private_key: settlerKey } }),
    );
    try {
      expect(() => loadConfig({ file, env: {} })).toThrow(
        /payments\.settler_private_key: read from the environment only/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
