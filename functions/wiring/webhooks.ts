import { newSqsClient } from '../adapters/aws-clients.js';
import {
  openTable,
  repositoriesOf,
  webhookBreakerRepository,
  webhookHoldStore,
  webhookRepository,
  webhookRetryStore,
} from '../adapters/dynamodb/repositories.js';
import { GuardedHttp } from '../adapters/http/guarded-http.js';
import { SqsDeliveryQueue } from '../adapters/sqs/delivery-queue.js';
import { log } from '../observability/logger.js';
import { countersLoadedAtInit } from '../observability/metrics-at-init.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/ports.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of the functions whose every request uses what others load on first use (here HTTP guarded against private addresses, which the send consumer loads on first use). Apart from functions/wiring.ts because what a function loads on first use must be reached
 * by no static import of another function's: a module reached statically is part of that
 * function's init (even where none of its code runs), and `import()` of it then splits nothing off.
 */

/** Where the service connects on a user's behalf: public https only (loopback too where allowed, locally). */
const guardedHttp = (allowLoopback: string | undefined) =>
  new GuardedHttp({ allowLoopback: allowLoopback === 'true' });

/** POST /v1/webhooks: the endpoints, and the guard every new endpoint is checked by. */
export function webhookApiDeps(name: 'create-webhook') {
  const deps = apiDeps(name, { webhooks: webhookRepository });
  const { WEBHOOK_ALLOW_LOOPBACK } = loadConfig('WEBHOOK_ALLOW_LOOPBACK');
  return { ...deps, guard: guardedHttp(WEBHOOK_ALLOW_LOOPBACK) };
}

/**
 * The delivery function: the endpoints and their messages, guarded HTTP, the queue its short
 * retries are sent to (delayed), the table its long ones are parked in, and where the messages of
 * a paused endpoint are held.
 */
export function webhookDeliveryDeps() {
  const config = loadConfig('TABLE_NAME', 'WEBHOOK_QUEUE_URL', 'WEBHOOK_ALLOW_LOOPBACK');
  const { webhooks, webhookRetries, held } = repositoriesOf(openTable(config.TABLE_NAME), {
    webhooks: webhookBreakerRepository,
    webhookRetries: webhookRetryStore,
    held: webhookHoldStore,
  });
  return {
    webhooks,
    retries: webhookRetries,
    held,
    sender: guardedHttp(config.WEBHOOK_ALLOW_LOOPBACK),
    queue: new SqsDeliveryQueue(newSqsClient(), config.WEBHOOK_QUEUE_URL),
    clock: systemClock,
    log,
    counters: countersLoadedAtInit(),
  };
}
