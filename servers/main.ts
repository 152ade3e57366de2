/**
 * `npm start`: the whole service in one process. Stops cleanly on SIGTERM/SIGINT (no new requests,
 * in-flight requests and deliveries finish, database closed).
 */
import { ConfigError } from './config.ts';
import { SecretsKeyMissingError } from './secrets.ts';
import { startService } from './server.ts';

try {
  const service = await startService();
  const { config, services } = service;
  services.log.info(
    {
      site_url: config.site_url,
      base_url: config.base_url,
      public_api_url: config.public_api_url,
      mcp_url: config.mcp_url,
      database: services.dialect,
    },
    `agent-service listening on ${service.url}`,
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      services.log.info({ signal }, 'shutting down');
      service.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          services.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof SecretsKeyMissingError) {
    console.error(err instanceof ConfigError ? err.message : `Invalid configuration:\n  - ${err.message}`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
