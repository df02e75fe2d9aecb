import { emailRepository, openTable, shareStore } from '../adapters/dynamodb/repositories.js';
import { contentStoreOnFirstUse } from '../adapters/s3/content-store-on-first-use.js';
import { log } from '../observability/logger.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/ports.js';

/**
 * The wiring of get-shared-email, a token page (http/token.ts): no API keys, no request log; the
 * share links, the emails and their bodies in the content store (loaded on first use).
 */
export function sharedEmailPageDeps() {
  const { TABLE_NAME, CONTENT_BUCKET } = loadConfig('TABLE_NAME', 'CONTENT_BUCKET');
  const table = openTable(TABLE_NAME);
  return {
    shares: shareStore(table),
    emails: emailRepository(table),
    content: contentStoreOnFirstUse(CONTENT_BUCKET),
    clock: systemClock,
    log,
  };
}
