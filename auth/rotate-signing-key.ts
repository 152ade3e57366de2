/**
 * `npm run rotate-signing-key`: retires the signing key of the database the configuration names and
 * makes a new one; prints its key id. Every process signs with the new key once it restarts; until
 * then the retired key keeps signing and stays accepted (auth/README.md, "Rotating the signing key").
 */
import { openDatabase } from '../db/database.ts';
import { loadConfig, secretBoxOf, sqliteFile } from '../servers/config.ts';
import { rotateSigningKey } from './keys.ts';

const config = loadConfig();
const handle = openDatabase({ url: config.database_url, sqliteFile: sqliteFile(config) });
try {
  const kid = await rotateSigningKey(handle.db, secretBoxOf(config));
  process.stdout.write(`${handle.dialect}: signing key ${kid}\n`);
} finally {
  await handle.close();
}
