/**
 * `servers/main.ts` with the test SKU added (test/helpers/paid-operations.ts): a service process for
 * tests that pay across processes. Configured by the environment like `npm start`; with
 * `TEST_ECHO_LOG` the test SKU appends its runs to that file (crash tests read it after a kill -9).
 */
import { startService } from '../../servers/server.ts';
import { withTestSku } from './paid-operations.ts';

const log = process.env.TEST_ECHO_LOG;
const service = await startService({ operations: withTestSku(log ? { runs: new Map(), log } : undefined) });
service.services.log.info(`agent-service listening on ${service.url}`);
process.once('SIGTERM', () => {
  service.stop().then(() => process.exit(0));
});
