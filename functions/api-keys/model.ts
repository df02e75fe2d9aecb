import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { PERMISSIONS } from './permissions.js';

/**
 * API keys: `esk_` followed by 32 random bytes in base64url (256 bits). Only the SHA-256 of the
 * token is stored, and a key is found by that hash: no secret is ever compared byte by byte, so
 * response times say nothing about how close a guess was. With that much entropy a fast hash is
 * enough (there is nothing to brute-force).
 */
export const TOKEN_PREFIX = 'esk_';
// Generated tokens have 43 characters after the prefix; a chosen local key (DEV_API_KEY) may differ.
const TOKEN_SHAPE = /^esk_[A-Za-z0-9_-]{16,128}$/;

export { PERMISSIONS } from './permissions.js';
export type Permission = (typeof PERMISSIONS)[number];

export interface ApiKey {
  id: string;
  name: string;
  permission: Permission;
  hash: string;
  created_at: string;
  /** Sending keys only: the one domain this key may send from (its id, and its name for the check). */
  domain_id?: string;
  domain?: string;
  last_used_at?: string;
}

export const API_KEY_ID_PREFIX = 'key';

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const looksLikeToken = (token: string): boolean => TOKEN_SHAPE.test(token);

export function generateApiKey(
  name: string,
  permission: Permission,
  now: Date,
  domain?: { id: string; domain: string },
): { key: ApiKey; token: string } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const key: ApiKey = {
    id: newId(API_KEY_ID_PREFIX),
    name,
    permission,
    hash: hashToken(token),
    created_at: now.toISOString(),
  };
  if (domain) Object.assign(key, { domain_id: domain.id, domain: domain.domain });
  return { token, key };
}

/** Whether a key may call an endpoint that needs `required`. */
export const permits = (key: Pick<ApiKey, 'permission'>, required: Permission): boolean =>
  key.permission === 'full_access' || required === 'sending_access';

export const restricted = (message: string) => new ApiError(403, 'restricted_api_key', message);

/** A sending key restricted to a domain may send only from that domain. */
export function assertMaySendFrom(key: ApiKey, senderDomain: string): void {
  if (key.domain && key.domain !== senderDomain) {
    throw restricted(
      `This API key may only send from ${key.domain} (domain ${key.domain_id}); the sender's domain is ${senderDomain}.`,
    );
  }
}

/** What the API shows of a key: never its token or hash. */
export const toApiKeyBody = (key: ApiKey) => ({
  object: 'api_key' as const,
  id: key.id,
  name: key.name,
  permission: key.permission,
  domain_id: key.domain_id ?? null,
  created_at: key.created_at,
  last_used_at: key.last_used_at ?? null,
});
