import { emailRepository } from '../adapters/dynamodb/repositories.js';
import { contentStoreOnFirstUse } from '../adapters/s3/content-store-on-first-use.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of get-email. Apart from functions/wiring.ts because what a function loads on first use must be reached
 * by no static import of another function's: a module reached statically is part of that
 * function's init (even where none of its code runs), and `import()` of it then splits nothing off.
 */

/** GET /v1/emails/{id}: the content store, loaded on first use (only bodies kept there need it). */
export function emailReaderDeps() {
  const { CONTENT_BUCKET } = loadConfig('CONTENT_BUCKET');
  return {
    ...apiDeps('get-email', { emails: emailRepository }),
    content: contentStoreOnFirstUse(CONTENT_BUCKET),
  };
}
