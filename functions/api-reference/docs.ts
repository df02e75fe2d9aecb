import type { DocsOf } from '../shared/route.js';
import type { API_REFERENCE_ROUTES } from './routes.js';

/** The API reference's pages in the OpenAPI document (routes.ts declares them). */
export const API_REFERENCE_DOCS: DocsOf<typeof API_REFERENCE_ROUTES> = {
  'get-openapi': {
    ok: 'This document.',
    pageSchema: { type: 'object', description: 'This document (OpenAPI 3.1).' },
  },
  'get-api-reference': {
    ok: 'The API reference: this document as a page (no scripts, works offline).',
  },
};
