/**
 * `npm start`: the whole service in one process. Stops cleanly on SIGTERM/SIGINT (readiness 503, no
 * new connections, in-flight requests and queued work finish, database closed, exit 0).
 */
import cluster from 'node:cluster';
import { runPrimary, workersRefusal } from './cluster.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { SecretsKeyMissingError } from './secrets.ts';
import { startService } from './server.ts';

try {
  const settings = loadConfig();
  const refusal = workersRefusal(settings);
  if (refusal) throw new ConfigError([refusal]);
  if (settings.server.workers > 1 && cluster.isPrimary) {
    await runPrimary(settings, createLogger(settings));
  } else {
    await serve();
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof SecretsKeyMissingError) {
    console.error(err instanceof ConfigError ? err.message : `Invalid configuration:\n  - ${err.message}`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}

/** One whole service in this process (`WORKERS=1`, or a worker of the primary). */
async function serve(): Promise<void> {
  const service = await startService({ developmentPayTo: true });
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
  // Logs are buffered (logger.ts): the line supervisors and tests wait for goes out at once.
  services.log.flush();
  // A crash is logged as a line too; the exit that follows writes out the buffer.
  process.on('uncaughtExceptionMonitor', (err, origin) => {
    services.log.fatal({ err, origin }, 'fatal error');
  });
  // A second signal (a supervisor and its process group, Ctrl-C twice) must not kill the drain.
  let draining = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (draining) return;
      draining = true;
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
}
