import type { WorkerSpec } from '../shared/function-spec.js';

/** The unsubscribe links' background function (shared/function-spec.ts). */
export const UNSUBSCRIBE_WORKERS = {
  // Reads the keys' secret and writes a new version of it (GetSecretValue, PutSecretValue); no table.
  'rotate-unsubscribe-keys': {
    description:
      "Rotates the unsubscribe links' signing keys: a new key monthly, keys past their links' lifetime dropped",
    env: ['UNSUBSCRIBE_KEYS_SECRET'],
    table: { actions: [] },
    unsubscribeKeys: 'rotate',
  },
} as const satisfies Record<string, WorkerSpec>;
