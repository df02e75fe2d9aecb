import { createHash, randomBytes } from 'node:crypto';
import { newId } from './ids.js';

/**
 * API keys: `esk_` followed by 32 random bytes in base64url (256 bits). Only the SHA-256 of the
 * token is stored; with that much entropy a fast hash is enough (nothing to brute-force), and the
 * lookup is by hash, so no secret is ever compared byte by byte.
 */
export const TOKEN_PREFIX = 'esk_';
// Generated tokens have 43 characters after the prefix; a chosen local key (DEV_API_KEY) may differ.
const TOKEN_SHAPE = /^esk_[A-Za-z0-9_-]{16,128}$/;

export type Permission = 'full_access' | 'sending_access';

export interface ApiKey {
  id: string;
  name: string;
  permission: Permission;
  hash: string;
  created_at: string;
}

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const looksLikeToken = (token: string): boolean => TOKEN_SHAPE.test(token);

export function generateApiKey(
  name: string,
  permission: Permission,
  now: Date,
): { key: ApiKey; token: string } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return {
    token,
    key: { id: newId('key'), name, permission, hash: hashToken(token), created_at: now.toISOString() },
  };
}
