import { extensionSecret } from '../adapters/secrets-manager/extension.js';
import { loadConfig } from '../shared/config.js';
import { KeyRing } from '../unsubscribe/keys.js';
import { SignedUnsubscribeLinks, type UnsubscribeLinks } from '../unsubscribe/links.js';

/**
 * The unsubscribe links' keys: the secret UNSUBSCRIBE_KEYS_SECRET names, read through the AWS
 * Parameters and Secrets Lambda Extension (on AWS the layer; locally its twin,
 * local/secrets-extension.ts), never from the environment. One ring per container.
 */
let ring: KeyRing | undefined;
export function unsubscribeKeys(secretId: string): KeyRing {
  ring ??= new KeyRing(extensionSecret({ secretId }));
  return ring;
}

/** The links the send path and broadcasts put in List-Unsubscribe (PUBLIC_ORIGIN, the keys' signing key). */
export function unsubscribeLinks(): UnsubscribeLinks {
  const { PUBLIC_ORIGIN, UNSUBSCRIBE_KEYS_SECRET } = loadConfig('PUBLIC_ORIGIN', 'UNSUBSCRIBE_KEYS_SECRET');
  const keys = unsubscribeKeys(UNSUBSCRIBE_KEYS_SECRET);
  return new SignedUnsubscribeLinks({ origin: PUBLIC_ORIGIN, keys: () => keys.keys() });
}
