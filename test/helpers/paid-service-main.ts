/**
 * `servers/main.ts` with the test SKU added (test/helpers/paid-operations.ts): a service process for
 * tests that pay across processes. Configured by the environment like `npm start`.
 */
import { startService } from '../../servers/server.ts';
import { withTestSku } from './paid-operations.ts';

const service = await startService({ operations: withTestSku() });
service.services.log.info(`agent-service listening on ${service.url}`);
process.once('SIGTERM', () => {
  service.stop().then(() => process.exit(0));
});
