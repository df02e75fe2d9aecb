import { createHash } from 'node:crypto';

/**
 * A page the service answers with whoever asks (http/public.ts serves them): what the concepts that
 * build one (the API reference, the console) make.
 */

/** A page built into the service: its media type and its bytes (the same for every request). */
export interface BuiltPage {
  contentType: string;
  body: string;
  /** The hashes of the inline styles it carries, for its Content-Security-Policy (HTML pages). */
  styleHashes?: readonly string[];
  /** Its own Content-Security-Policy, instead of the one made from `styleHashes`. */
  contentSecurityPolicy?: string;
  /** Its own Cache-Control (default: `public, max-age=300`). */
  cacheControl?: string;
  /** Its ETag, when it was computed at build time (default: a hash of the body). */
  etag?: string;
}

/** `'sha256-…'` of an inline style or script, as a Content-Security-Policy source. */
export const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
