import type { DocsOf } from '../shared/route.js';
import type { LOG_ROUTES } from './routes.js';

/** The request logs' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

export const LOG_DOCS: DocsOf<typeof LOG_ROUTES> = {
  'list-logs': {
    ok: 'A page of request logs, newest first (without their bodies).',
    example: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: '019ab9a2-4c3e-7d10-8f2a-3b4c5d6e7f80',
          created_at: '2026-11-22T03:29:55.214Z',
          endpoint: '/v1/emails',
          method: 'POST',
          response_status: 200,
          user_agent: 'resend-node:6.38.0',
          api_key_id: 'key_01m80p3k8xe4vbr9n6tq2j7c5d',
          api_key_name: 'production',
          duration_ms: 41.27,
        },
      ],
    },
    description:
      'Every API request a handler answered (not these reads themselves), kept `logRetentionDays` (30 by default). Cursor pages (`after`, `before`: a log id); `status` filters by class (`2xx`, `3xx`, `4xx`, `5xx`); ours: `method`, `path` (a prefix of the endpoint) and `api_key_id`, read from the logs’ own partitions with a filter, at most 4,000 logs a page (a page stopped there before it is full gives `scanned_to`, the cursor to read on from). Each log names its key (`api_key_name`, ours: null once the key is deleted). A deployment with request logs turned off (`requestLogs=false`) answers 404 saying so. See docs/logs.md.',
  },
  'get-log': {
    ok: 'One request, with its request and response bodies, redacted (no token, signing secret, attachment content or download link) and capped at 8 KB each.',
    example: {
      object: 'log',
      id: '019ab9a2-4c3e-7d10-8f2a-3b4c5d6e7f80',
      created_at: '2026-11-22T03:29:55.214Z',
      endpoint: '/v1/api-keys',
      method: 'POST',
      response_status: 201,
      user_agent: 'curl/8.5.0',
      api_key_id: 'key_01m80p3k8xe4vbr9n6tq2j7c5d',
      api_key_name: 'production',
      duration_ms: 12.5,
      request_body: { name: 'production' },
      response_body: { object: 'api_key', id: 'key_01m80q0c4ab2m8s7z1r3d5e6fg', token: '[redacted]' },
    },
  },
};
