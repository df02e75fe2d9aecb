import { randomBytes } from 'node:crypto';
import { SecretsApi } from '../adapters/secrets-manager/secrets-api.js';
import { log } from '../observability/logger.js';
import { loadConfig } from '../shared/config.js';
import { rotateUnsubscribeKeys } from '../unsubscribe/rotate.js';
import { stackRegion } from '../wiring.js';

/** Scheduled monthly (lib/constructs/unsubscribe-keys.ts): one rotation of the unsubscribe keys. */
export async function handler(): Promise<void> {
  const { UNSUBSCRIBE_KEYS_SECRET } = loadConfig('UNSUBSCRIBE_KEYS_SECRET');
  const api = new SecretsApi({ region: stackRegion() });
  const result = await rotateUnsubscribeKeys({
    store: {
      read: () => api.getSecretValue(UNSUBSCRIBE_KEYS_SECRET),
      write: (value, token) => api.putSecretValue(UNSUBSCRIBE_KEYS_SECRET, value, token),
    },
    now: () => new Date(),
    random: (n) => randomBytes(n),
  });
  log.info('rotated the unsubscribe keys', { key_id: result.keyId, keys: result.keys });
}
