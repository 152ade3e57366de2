/** The process of `agent-service-scan` (bin/agent-service-scan.mjs starts it): runs the command, exits with its code. */
import { main } from './scan.ts';

const code = await main(process.argv.slice(2));
// The report is written; connections a scan left idle (kept alive for seconds) must not hold a CI job.
process.stdout.write('', () => process.exit(code));
