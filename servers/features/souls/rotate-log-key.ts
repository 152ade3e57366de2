/**
 * `npm run rotate-soul-log-key`: retires the key the service signs soul logs with and makes a new
 * one; prints its key id. Every process signs with the new key once it restarts; the retired key
 * stays published in `{site_url}/api/soul/jwks.json`, so what it signed keeps verifying (docs/guides/souls.md
 * "Checking a log").
 */
import { openDatabase } from '../../../db/database.ts';
import { loadConfig, secretBoxOf, sqliteFile } from '../../config.ts';
import { rotateLogKey } from './log-keys.ts';

const config = loadConfig();
const handle = openDatabase({ url: config.database_url, sqliteFile: sqliteFile(config) });
try {
  const kid = await rotateLogKey(handle.db, secretBoxOf(config), () => new Date());
  process.stdout.write(`${handle.dialect}: soul log key ${kid}\n`);
} finally {
  await handle.close();
}
