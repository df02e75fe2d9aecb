import { randomBytes } from 'node:crypto';
import { SecretsApi } from '../adapters/secrets-manager/secrets-api.js';
import { loadConfig } from '../shared/config.js';
import type { KeyStore } from '../unsubscribe/rotate.js';
import { stackRegion } from '../wiring.js';

/** What one rotation of the unsubscribe keys runs with (unsubscribe/rotate.ts). */
export interface RotationDeps {
  readonly store: KeyStore;
  readonly now: () => Date;
  readonly random: (bytes: number) => Uint8Array;
}

/** The rotation's wiring: the secret UNSUBSCRIBE_KEYS_SECRET names, through Secrets Manager's API. */
export function rotationDeps(): RotationDeps {
  const { UNSUBSCRIBE_KEYS_SECRET } = loadConfig('UNSUBSCRIBE_KEYS_SECRET');
  const api = new SecretsApi({ region: stackRegion() });
  return {
    store: {
      read: () => api.getSecretValue(UNSUBSCRIBE_KEYS_SECRET),
      write: (value, token) => api.putSecretValue(UNSUBSCRIBE_KEYS_SECRET, value, token),
    },
    now: () => new Date(),
    random: (n) => randomBytes(n),
  };
}
