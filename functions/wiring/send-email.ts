import { contentStoreOnFirstUse } from '../adapters/s3/content-store-on-first-use.js';
import { loadConfig } from '../shared/config.js';
import { sendEmailDeps } from '../wiring.js';

/**
 * The wiring of send-email. Apart from functions/wiring.ts because what a function loads on first use must be reached
 * by no static import of another function's: a module reached statically is part of that
 * function's init (even where none of its code runs), and `import()` of it then splits nothing off.
 */

/**
 * POST /v1/emails: the above, the content store its attachments and large bodies go to (loaded on
 * first use: most emails have neither), and which paths may be fetched.
 */
export function singleSendDeps() {
  const { CONTENT_BUCKET, ATTACHMENT_ALLOW_LOOPBACK } = loadConfig(
    'CONTENT_BUCKET',
    'ATTACHMENT_ALLOW_LOOPBACK',
  );
  return {
    ...sendEmailDeps('send-email'),
    content: contentStoreOnFirstUse(CONTENT_BUCKET),
    targets: { allowLoopback: ATTACHMENT_ALLOW_LOOPBACK === 'true' },
  };
}
