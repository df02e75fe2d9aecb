import { breakerDecision, ENDPOINT_SHARE, PROBE_LEASE_MS } from './breaker.js';
import { type DeliverWebhookDeps, deliverWebhook } from './deliver.js';
import { attemptNumber, type Delivery, parseDelivery, type Webhook } from './model.js';
import type { WebhookBreakerRepository, WebhookHoldStore } from './ports.js';
import { type RetryLaterDeps, retryLater } from './retries.js';

export interface DeliverBatchDeps extends DeliverWebhookDeps, RetryLaterDeps {
  webhooks: DeliverWebhookDeps['webhooks'] &
    Pick<WebhookBreakerRepository, 'get' | 'claimProbe' | 'markHeld'>;
  held: Pick<WebhookHoldStore, 'hold'>;
}

/** A delivery-queue message as received. */
export interface QueuedMessage {
  id: string;
  body: string;
  /** SQS's receive count of this message (1 the first time). */
  receiveCount: number;
}

/**
 * One endpoint as one batch sees it: read once (before its first message), then as its own
 * attempts leave it (a failure that opens the breaker is seen by the messages after it), and at
 * most ENDPOINT_SHARE of its attempts at once.
 */
class Endpoint {
  private state: Promise<Webhook | null>;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(read: Promise<Webhook | null>) {
    this.state = read;
  }
  current() {
    return this.state;
  }
  update(webhook: Webhook) {
    this.state = Promise.resolve(webhook);
  }
  async acquire() {
    if (this.running < ENDPOINT_SHARE) {
      this.running++;
      return;
    }
    // The lane is handed over by the attempt that frees it.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

type Handled = { done: boolean } | { hold: Delivery };

/**
 * The delivery queue's consumer, one batch: each message is one event for one endpoint, the
 * batch's attempts side by side, at most ENDPOINT_SHARE to one endpoint at once (the others of
 * that endpoint wait for a lane), so a slow endpoint holds its own lanes, at most
 * ATTEMPT_TIMEOUT_MS each, and not the others'. Each endpoint is read once per batch, just before
 * its attempts, so a rotated secret, a new URL or a disabled endpoint applies at once; its circuit
 * breaker (breaker.ts) decides whether a message is attempted, is the probe, or is held.
 *
 * A message is done (its queue message may be deleted) once attempted and its retry, if any, sent
 * as a delayed message or parked (retries.ts), or once held. Held messages are written together
 * at the end of the batch, then their endpoints marked (`held_at`) for the requeue function.
 * Answers the ids of the messages not done: they come back after the queue's visibility timeout.
 */
export async function deliverBatch(deps: DeliverBatchDeps, messages: readonly QueuedMessage[]) {
  const endpoints = new Map<string, Endpoint>();
  const endpoint = (id: string) => {
    let found = endpoints.get(id);
    if (!found) {
      found = new Endpoint(deps.webhooks.get(id));
      endpoints.set(id, found);
    }
    return found;
  };
  const handled = await Promise.all(
    messages.map((message) =>
      handleMessage(deps, message, endpoint).catch((error): Handled => {
        // The table or the queue failed: the message comes back after the queue's visibility timeout.
        deps.log?.error('webhook message failed', { messageId: message.id, error });
        return { done: false };
      }),
    ),
  );
  const held = handled.flatMap((h) => ('hold' in h ? [h.hold] : []));
  let heldDone = held.length === 0;
  if (held.length) {
    try {
      await deps.held.hold(held);
      const token = `${deps.clock.now().toISOString()}#${Math.random().toString(36).slice(2, 10)}`;
      await Promise.all(
        [...new Set(held.map((d) => d.webhook_id))].map((id) => deps.webhooks.markHeld(id, token)),
      );
      deps.counters?.count('WebhookMessagesHeld', held.length);
      heldDone = true;
    } catch (error) {
      deps.log?.error('could not hold webhook messages; they come back', { count: held.length, error });
    }
  }
  return messages
    .filter((_, i) => {
      const h = handled[i] as Handled;
      return 'hold' in h ? !heldDone : !h.done;
    })
    .map((message) => message.id);
}

async function handleMessage(
  deps: DeliverBatchDeps,
  message: QueuedMessage,
  endpointOf: (id: string) => Endpoint,
): Promise<Handled> {
  const delivery = parseDelivery(message.body);
  if (!delivery) {
    // Nothing to attempt: it reaches the dead-letter queue after the queue's maxReceiveCount.
    deps.log?.error('unreadable webhook message', {
      messageId: message.id,
      receiveCount: message.receiveCount,
    });
    return { done: false };
  }
  const attempt = attemptNumber(delivery, message.receiveCount);
  const ids = { webhook_id: delivery.webhook_id, message_id: delivery.message_id, type: delivery.type };
  const endpoint = endpointOf(delivery.webhook_id);
  await endpoint.acquire();
  try {
    const webhook = await endpoint.current();
    let probe = false;
    // A replay (asked for by the user) is attempted even while paused: its success closes the breaker.
    if (webhook?.status === 'enabled' && !delivery.replay) {
      const now = deps.clock.now();
      const decision = breakerDecision(webhook, now.getTime());
      if (decision === 'probe') {
        const at = now.toISOString();
        const stale = new Date(now.getTime() - PROBE_LEASE_MS).toISOString();
        probe = await deps.webhooks.claimProbe(webhook.id, webhook.paused_until ?? at, at, stale);
        endpoint.update({ ...webhook, probe_at: at });
      }
      if (decision === 'hold' || (decision === 'probe' && !probe)) {
        // Not an attempt: it is kept with the attempts made before this receive.
        const before = attempt - 1;
        const { attempts_made: _, ...rest } = delivery;
        return { hold: before > 0 ? { ...rest, attempts_made: before } : rest };
      }
    }
    const outcome = await deliverWebhook(deps, delivery, attempt, webhook, probe);
    if (outcome.endpoint) endpoint.update(outcome.endpoint);
    else if (outcome.result === 'success' && webhook) {
      const {
        failures: _f,
        paused_until: _p,
        trips: _t,
        probe_at: _a,
        failing_since: _s,
        ...closed
      } = webhook;
      endpoint.update(closed);
    }
    const { endpoint: _, ...logged } = outcome;
    deps.log?.info('webhook message', { ...ids, attempt, probe, ...logged });
    if (outcome.result === 'retry') await retryLater(deps, delivery, attempt, outcome);
    return { done: true };
  } finally {
    endpoint.release();
  }
}
