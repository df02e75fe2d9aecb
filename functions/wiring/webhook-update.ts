import { webhookRepository } from '../adapters/dynamodb/repositories.js';
import { endpointGuardOnFirstUse } from '../adapters/http/fetcher-on-first-use.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/*
 * A module of its own: the guard's import() makes a chunk in every function that reaches it, so
 * only update-webhook does.
 */

/** PATCH /v1/webhooks/{id}: the endpoints, and their guard, loaded when an endpoint changes. */
export function webhookUpdateDeps() {
  const { WEBHOOK_ALLOW_LOOPBACK } = loadConfig('WEBHOOK_ALLOW_LOOPBACK');
  return {
    ...apiDeps('update-webhook', { webhooks: webhookRepository }),
    guard: endpointGuardOnFirstUse({ allowLoopback: WEBHOOK_ALLOW_LOOPBACK === 'true' }),
  };
}
