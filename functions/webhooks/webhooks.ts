import { notFound, validationError } from '../shared/errors.js';
import { isId } from '../shared/ids.js';
import type { PageQuery } from '../shared/list.js';
import type { Clock } from '../shared/ports.js';
import {
  MAX_WEBHOOKS,
  MESSAGE_ID_PREFIX,
  MOST_ATTEMPTS_INCLUDED,
  newSigningSecret,
  newWebhookId,
  ROTATION_OVERLAP_MS,
  type SubscribableEventType,
  WEBHOOK_ID_PREFIX,
  type Webhook,
  type WebhookMessage,
  type WebhookStatus,
} from './model.js';
import type { DeliveryQueue, EndpointGuard, WebhookRepository } from './ports.js';

export interface WebhookDeps {
  webhooks: WebhookRepository;
  clock: Clock;
}

/** Refuses an endpoint the guard refuses, naming the field. */
async function checkEndpoint(guard: EndpointGuard, endpoint: string) {
  const problem = await guard.check(endpoint);
  if (problem) throw validationError(`endpoint: ${problem}`, [{ field: 'endpoint', message: problem }]);
}

export async function createWebhook(
  deps: WebhookDeps & { guard: EndpointGuard },
  input: { endpoint: string; events: SubscribableEventType[] },
): Promise<Webhook> {
  await checkEndpoint(deps.guard, input.endpoint);
  if ((await deps.webhooks.all()).length >= MAX_WEBHOOKS)
    throw validationError(
      `This service already has ${MAX_WEBHOOKS} webhook endpoints, the most it keeps; delete one first.`,
    );
  const webhook: Webhook = {
    id: newWebhookId(),
    endpoint: input.endpoint,
    events: input.events,
    status: 'enabled',
    created_at: deps.clock.now().toISOString(),
    signing_secret: newSigningSecret(),
  };
  await deps.webhooks.create(webhook);
  return webhook;
}

export async function getWebhook(deps: Pick<WebhookDeps, 'webhooks'>, id: string): Promise<Webhook> {
  const webhook = isId(WEBHOOK_ID_PREFIX, id) ? await deps.webhooks.get(id) : null;
  if (!webhook) throw notFound(`Webhook ${JSON.stringify(id)} not found.`);
  return webhook;
}

async function save(deps: Pick<WebhookDeps, 'webhooks'>, webhook: Webhook, fresh = false): Promise<Webhook> {
  if (!(await deps.webhooks.save(webhook, { fresh })))
    throw notFound(`Webhook ${JSON.stringify(webhook.id)} not found.`);
  return webhook;
}

/**
 * Changes an endpoint's URL, events or status. Enabling it again clears why it was disabled and,
 * as a new URL does, its failing mark and its breaker, so it gets three more days before it could
 * be disabled again. Only the endpoint's own fields are written: a failure, a pause or a held mark
 * the delivery function writes meanwhile is kept.
 */
export async function updateWebhook(
  deps: WebhookDeps & { guard: EndpointGuard },
  id: string,
  patch: { endpoint?: string; events?: SubscribableEventType[]; status?: WebhookStatus },
): Promise<Webhook> {
  const webhook = await getWebhook(deps, id);
  if (patch.endpoint !== undefined) await checkEndpoint(deps.guard, patch.endpoint);
  const next: Webhook = {
    ...webhook,
    ...(patch.endpoint !== undefined ? { endpoint: patch.endpoint } : {}),
    ...(patch.events !== undefined ? { events: patch.events } : {}),
  };
  // Enabled again, or given a new URL: its failing mark and its circuit breaker start afresh
  // (breaker.ts); its held messages are then put back on the queue by the requeue function.
  const reEnabled = patch.status === 'enabled' && webhook.status !== 'enabled';
  const fresh = reEnabled || (patch.endpoint !== undefined && patch.endpoint !== webhook.endpoint);
  if (fresh)
    for (const field of ['failing_since', 'failures', 'paused_until', 'trips', 'probe_at'] as const)
      delete next[field];
  if (reEnabled) {
    next.status = 'enabled';
    delete next.disabled_reason;
  } else if (patch.status === 'disabled' && webhook.status !== 'disabled') {
    next.status = 'disabled';
    next.disabled_reason = `disabled by request at ${deps.clock.now().toISOString()}`;
  }
  return save(deps, next, fresh);
}

/**
 * A new signing secret; the one it replaces keeps signing beside it for ROTATION_OVERLAP_MS, so
 * receivers can switch without missing a message. Rotating again within that time drops the
 * oldest one (two secrets sign at most).
 */
export async function rotateSigningSecret(deps: WebhookDeps, id: string): Promise<Webhook> {
  const webhook = await getWebhook(deps, id);
  const until = new Date(deps.clock.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
  return save(deps, {
    ...webhook,
    signing_secret: newSigningSecret(),
    previous_secret: { secret: webhook.signing_secret, until },
  });
}

export async function deleteWebhook(deps: Pick<WebhookDeps, 'webhooks'>, id: string): Promise<void> {
  const webhook = await getWebhook(deps, id);
  if (!(await deps.webhooks.delete(webhook.id))) throw notFound(`Webhook ${JSON.stringify(id)} not found.`);
}

export async function listMessages(deps: Pick<WebhookDeps, 'webhooks'>, webhookId: string, query: PageQuery) {
  const webhook = await getWebhook(deps, webhookId);
  return deps.webhooks.listMessages(webhook.id, query);
}

/**
 * Each message's newest attempts (at most MOST_ATTEMPTS_INCLUDED), asked in parallel: what the
 * console shows of a page of messages, in one request instead of one per message.
 */
export const recentAttempts = (deps: Pick<WebhookDeps, 'webhooks'>, messages: readonly WebhookMessage[]) =>
  Promise.all(
    messages.map(
      async (message) =>
        (
          await deps.webhooks.listAttempts(message.webhook_id, message.id, {
            limit: MOST_ATTEMPTS_INCLUDED,
            offset: 0,
          })
        ).data,
    ),
  );

export async function getMessage(
  deps: Pick<WebhookDeps, 'webhooks'>,
  webhookId: string,
  messageId: string,
): Promise<WebhookMessage> {
  const webhook = await getWebhook(deps, webhookId);
  const message = isId(MESSAGE_ID_PREFIX, messageId)
    ? await deps.webhooks.getMessage(webhook.id, messageId)
    : null;
  if (!message) throw notFound(`Event ${JSON.stringify(messageId)} of webhook ${webhook.id} not found.`);
  return message;
}

export async function listAttempts(
  deps: Pick<WebhookDeps, 'webhooks'>,
  webhookId: string,
  messageId: string,
  query: PageQuery,
) {
  const message = await getMessage(deps, webhookId, messageId);
  return deps.webhooks.listAttempts(message.webhook_id, message.id, query);
}

/**
 * Sends a message again: one more attempt, under the same id (receivers that already have it
 * recognise it), now `pending` until it is made.
 */
export async function replayMessage(
  deps: WebhookDeps & { queue: DeliveryQueue },
  webhookId: string,
  messageId: string,
): Promise<WebhookMessage> {
  const webhook = await getWebhook(deps, webhookId);
  if (webhook.status !== 'enabled')
    throw validationError(
      `Webhook ${webhook.id} is disabled; enable it (PATCH {"status":"enabled"}) to replay.`,
    );
  const message = await getMessage(deps, webhookId, messageId);
  const pending: WebhookMessage = {
    ...message,
    status: 'pending',
    next_attempt_at: deps.clock.now().toISOString(),
  };
  await deps.webhooks.recordAttempt(pending);
  await deps.queue.enqueue([
    {
      message_id: message.id,
      webhook_id: webhook.id,
      type: message.type,
      created_at: message.created_at,
      body: message.body,
      replay: { previous_attempts: message.attempts },
    },
  ]);
  return pending;
}
