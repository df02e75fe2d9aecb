import type { WorkerSpec } from '../shared/function-spec.js';

/** The request logs' background function: the writer (shared/function-spec.ts). */

export const LOG_WORKERS = {
  // The API functions' request-log lines, delivered by their log groups' subscription filters,
  // stored two groups of 12 to a BatchWriteItem (each item keyed by its log id); a batch it fails
  // comes back from its retry queue (lib/constructs/request-logs.ts, which grants that queue).
  'write-request-logs': {
    description: "Stores the API's request logs, delivered from the API functions' log groups",
    env: ['TABLE_NAME', 'LOG_RETENTION_DAYS'],
    optionalEnv: ['REQUEST_LOG_BODIES'],
    table: { actions: ['BatchWriteItem'] },
  },
} as const satisfies Record<string, WorkerSpec>;
