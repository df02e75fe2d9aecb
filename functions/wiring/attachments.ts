import { emailRepository } from '../adapters/dynamodb/repositories.js';
import { newS3Client } from '../adapters/s3/client.js';
import { S3ContentStore } from '../adapters/s3/content-store.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of the functions whose every request uses what others load on first use (here the content store, which send-email, get-email and the send consumer load on first use). Apart from functions/wiring.ts because what a function loads on first use must be reached
 * by no static import of another function's: a module reached statically is part of that
 * function's init (even where none of its code runs), and `import()` of it then splits nothing off.
 */

/** The attachment routes: every request reads the content store (download links). */
export function contentReaderDeps(name: 'list-attachments' | 'get-attachment') {
  const { CONTENT_BUCKET } = loadConfig('CONTENT_BUCKET');
  return {
    ...apiDeps(name, { emails: emailRepository }),
    content: new S3ContentStore(newS3Client(), CONTENT_BUCKET),
  };
}
