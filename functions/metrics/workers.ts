import type { WorkerSpec } from '../shared/function-spec.js';

/** The metrics' background function: the roll-up (shared/function-spec.ts). */

export const METRICS_WORKERS = {
  // Its mark (GetItem, UpdateItem), a finished hour's counter shards (Query) summed into day items
  // (UpdateItem).
  'roll-up-metrics': {
    description: "Rolls the email metrics' finished hours up into day items",
    env: ['TABLE_NAME'],
    table: { actions: ['GetItem', 'Query', 'UpdateItem'] },
  },
} as const satisfies Record<string, WorkerSpec>;
