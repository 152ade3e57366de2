/**
 * `npm start`: the whole service in one process. Stops cleanly on SIGTERM/SIGINT (readiness 503, no
 * new connections, in-flight requests and queued work finish, database closed, exit 0).
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
      services.log.info({ signal, timeout_ms: config.server.shutdown_timeout_ms }, 'shutting down');
      // In-flight requests get shutdown_timeout_ms; background work as long again; then give up.
      setTimeout(() => {
        services.log.error('shutdown took longer than twice server.shutdown_timeout_ms; exiting');
        process.exit(1);
      }, 2 * config.server.shutdown_timeout_ms).unref();
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
