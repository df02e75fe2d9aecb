import type { DomainRepository } from '../domains/ports.js';
import { notFound, validationError } from '../shared/errors.js';
import { isId } from '../shared/ids.js';
import type { Clock } from '../shared/ports.js';
import { API_KEY_ID_PREFIX, type ApiKey, generateApiKey, type Permission } from './model.js';
import type { ApiKeyRepository } from './ports.js';

export interface ApiKeyDeps {
  apiKeys: ApiKeyRepository;
  domains: Pick<DomainRepository, 'get'>;
  clock: Clock;
}

/**
 * Creates a key and returns its token, which is never stored and never shown again. A key
 * restricted to a domain must name a domain of this service.
 */
export async function createApiKey(
  deps: ApiKeyDeps,
  input: { name: string; permission: Permission; domain_id?: string },
): Promise<{ object: 'api_key'; id: string; token: string }> {
  let domain: { id: string; domain: string } | undefined;
  if (input.domain_id) {
    const found = await deps.domains.get(input.domain_id);
    if (!found) {
      const message = `no domain ${input.domain_id}: add it with POST /v1/domains first`;
      throw validationError(`Invalid request: domain_id: ${message}`, [{ field: 'domain_id', message }]);
    }
    domain = { id: found.id, domain: found.domain };
  }
  const { key, token } = generateApiKey(input.name, input.permission, deps.clock.now(), domain);
  await deps.apiKeys.put(key);
  return { object: 'api_key', id: key.id, token };
}

/** Renames a key; its token and permission stay as they are. */
export async function renameApiKey(
  deps: Pick<ApiKeyDeps, 'apiKeys'>,
  id: string,
  name: string,
): Promise<ApiKey> {
  const key = isId(API_KEY_ID_PREFIX, id) ? await deps.apiKeys.getById(id) : null;
  if (!key || !(await deps.apiKeys.rename(key, name)))
    throw notFound(`API key ${JSON.stringify(id)} not found.`);
  return { ...key, name };
}

/** Revokes a key: from this moment its token gets 401. */
export async function revokeApiKey(deps: Pick<ApiKeyDeps, 'apiKeys'>, id: string): Promise<ApiKey> {
  const key = isId(API_KEY_ID_PREFIX, id) ? await deps.apiKeys.getById(id) : null;
  if (!key) throw notFound(`API key ${JSON.stringify(id)} not found.`);
  await deps.apiKeys.deleteByHash(key.hash);
  return key;
}

/**
 * The names of these keys now, by id (request logs show them beside the id): each read by id, side
 * by side (a page of logs names few keys). A key deleted since is not in the map: its logs keep
 * the id alone, as no name of it is kept anywhere once it is deleted.
 */
export async function keyNamesOf(
  apiKeys: Pick<ApiKeyRepository, 'getById'>,
  ids: readonly (string | null)[],
): Promise<Map<string, string>> {
  const unique = [...new Set(ids.filter((id): id is string => id !== null))];
  const found = await Promise.all(unique.map((id) => apiKeys.getById(id)));
  return new Map(found.flatMap((key) => (key ? [[key.id, key.name] as [string, string]] : [])));
}
