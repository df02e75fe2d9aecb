/**
 * Whether a send's body (or one email of a batch) names a `template`. Its own module so that
 * accept-send.ts can ask without loading the templates' code (send-templates.ts), which both use.
 */
export const namesTemplate = (body: unknown): body is Record<string, unknown> =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  (body as Record<string, unknown>).template !== undefined;
