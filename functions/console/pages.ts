import type { BuiltPage } from '../shared/page.js';
import { CONSOLE_ASSETS, CONSOLE_INDEX } from './assets.generated.js';
import type { ConsoleFile } from './files.js';

/**
 * The web console's policy: its own script and style sheet only (no inline script, no other origin),
 * calls to its own API, no framing of it. Images may come from `https:` and `data:` only for the
 * email preview, a sandboxed `srcdoc` frame, which inherits this policy and narrows it further with
 * its own (remote images off until asked). That frame is also why styles may be inline: an email's
 * HTML is styled inline, and the preview document is held to this policy too; with no script
 * allowed anywhere but the console's own file, inline styles run no code.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data: https:",
  // The preview is a `srcdoc` frame, which no frame-src governs (checked in Chromium): no frame of
  // any address may load.
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const page = (file: ConsoleFile, cacheControl: string): BuiltPage => ({
  contentType: file.contentType,
  body: file.body,
  etag: file.etag,
  cacheControl,
  contentSecurityPolicy: CONSOLE_CSP,
});

/** GET /: the console's page. Asked again each time (it names the current hashed files). */
export const consoleIndex = (): BuiltPage => page(CONSOLE_INDEX, 'no-cache');

/** GET /assets/{file}: a built file by its hashed name, cached for good; none for any other name. */
export const consoleAsset = (name: string): BuiltPage | undefined => {
  const file = Object.hasOwn(CONSOLE_ASSETS, name) ? CONSOLE_ASSETS[name] : undefined;
  return file && page(file, 'public, max-age=31536000, immutable');
};
