/**
 * `npm run dns-aid-records`: the DNS-AID zone lines of this deployment (`servers/adapters/dns-aid.ts`),
 * from the same configuration `npm start` reads, for the operator to add to the domain's zone
 * (docs/guides/site-owners/dns-aid.md). A bad configuration exits 78 (EX_CONFIG) with its message.
 */

import { dnsAidRecords, dnsAidZoneName } from '../servers/adapters/dns-aid.ts';
import { ConfigError, loadConfig } from '../servers/config.ts';

try {
  const config = loadConfig();
  process.stdout.write(
    `; DNS-AID records for the zone ${dnsAidZoneName(config)}\n${dnsAidRecords(config).join('\n')}\n`,
  );
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exitCode = 78;
}
