import type { DocsOf } from '../shared/route.js';
import type { CONSOLE_ROUTES } from './routes.js';

/** The web console's pages in the OpenAPI document (routes.ts declares them). */
export const CONSOLE_DOCS: DocsOf<typeof CONSOLE_ROUTES> = {
  'get-console': {
    ok: "The web console's page (it loads its script and style sheet from /assets/).",
  },
  'get-console-asset': {
    ok: 'The file: a script (text/javascript) or a style sheet (text/css), cached for a year.',
  },
};
