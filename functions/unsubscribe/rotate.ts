import { keyIdAt, parseKeySet, rotateKeySet } from './keys.js';

/** Where the keys are kept: the secret's current value, and a new current version of it. */
export interface KeyStore {
  read(): Promise<string>;
  /** `token` names the version: the same rotation retried writes the same version. */
  write(value: string, token: string): Promise<void>;
}

/**
 * One rotation of the unsubscribe keys (keys.ts, rotateKeySet): a new key, and the keys whose links
 * are past LINK_LIFETIME_DAYS + KEY_MARGIN_DAYS dropped. Run monthly by rotate-unsubscribe-keys.
 */
export async function rotateUnsubscribeKeys(deps: {
  store: KeyStore;
  now: () => Date;
  random: (bytes: number) => Uint8Array;
}): Promise<{ keyId: string; keys: number }> {
  const now = deps.now();
  const set = rotateKeySet(parseKeySet(await deps.store.read()), now, deps.random);
  // A version token must be 32 to 64 characters.
  await deps.store.write(JSON.stringify(set), `unsubscribe-keys-${keyIdAt(now)}`.padEnd(32, '0'));
  return { keyId: keyIdAt(now), keys: set.keys.length };
}
