/** docs/reference/errors.md: every error code from the one registry (`errorCodes` in servers/errors.ts). */
import { errorCodes } from '../../servers/errors.ts';
import { code, table } from './markdown.ts';

export function errorCodesBlock(): string {
  return table(
    ['code', 'status', 'title', 'when'],
    Object.entries(errorCodes).map(([name, e]) => [code(name), String(e.status), e.title, e.about]),
  );
}
