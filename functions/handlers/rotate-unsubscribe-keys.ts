import { log } from '../observability/logger.js';
import { rotateUnsubscribeKeys } from '../unsubscribe/rotate.js';
import { type RotationDeps, rotationDeps } from '../wiring/unsubscribe-rotation.js';

/** Scheduled monthly (lib/constructs/unsubscribe-keys.ts): one rotation of the unsubscribe keys. */
export const makeHandler = (deps: RotationDeps) => async (): Promise<void> => {
  const result = await rotateUnsubscribeKeys(deps);
  log.info('rotated the unsubscribe keys', { key_id: result.keyId, keys: result.keys });
};

let built: (() => Promise<void>) | undefined;
export async function handler(): Promise<void> {
  built ??= makeHandler(rotationDeps());
  await built();
}
