/**
 * Registers a module hook that loads the package's .ts files by stripping their types
 * (node:module stripTypeScriptTypes), inside node_modules too, where Node's own type stripping
 * refuses to (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING). The package's TypeScript is erasable
 * syntax only (tsconfig erasableSyntaxOnly), which is all stripping handles.
 */
import { register } from 'node:module';

register(new URL('./strip-types-loader.mjs', import.meta.url));
