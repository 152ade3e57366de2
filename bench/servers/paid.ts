/**
 * The service as `npm start` runs it, plus the benchmark's paid echo and its free twin
 * (bench/payments.ts); the embedded facilitator without a chain.
 */
import { operations } from '../../servers/registry.ts';
import { startService } from '../../servers/server.ts';
import { benchOperations } from '../payments.ts';

const service = await startService({ operations: [...operations, ...benchOperations] });
process.once('SIGTERM', () => {
  service.stop().then(() => process.exit(0));
});
