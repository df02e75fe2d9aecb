import type { Counters, Log } from '../shared/ports.js';
import { deliveryFor, type WebhookEvent, type WebhookEventType } from './model.js';
import type { DeliveryQueue, EventPublisher, Subscriptions, WebhookRepository } from './ports.js';

/**
 * Publishes the service's events: one delivery-queue message per (event, endpoint subscribed to
 * it), ten to a SendMessageBatch call. Each `subscriptions()` reads the endpoints (one strongly
 * consistent Query of their small partition, one read unit for up to 4 KB of them), so a webhook
 * created, updated or deleted before the read takes effect for what follows it; the functions that
 * raise events in batches read once an invocation (`readOncePerInvocation`).
 */
export class WebhookPublisher implements EventPublisher {
  constructor(
    private readonly deps: {
      webhooks: Pick<WebhookRepository, 'all'>;
      queue: DeliveryQueue;
      counters?: Counters;
    },
  ) {}

  async subscriptions(): Promise<Subscriptions> {
    const enabled = (await this.deps.webhooks.all()).filter((w) => w.status === 'enabled');
    const subscribers = (type: WebhookEventType) => enabled.filter((w) => w.events.includes(type));
    return {
      wants: (type) => subscribers(type).length > 0,
      publish: async (events) => {
        const deliveries = events.flatMap((event) =>
          subscribers(event.type).map((webhook) => deliveryFor(webhook.id, event)),
        );
        if (!deliveries.length) return;
        await this.deps.queue.enqueue(deliveries);
        this.deps.counters?.count('WebhookMessagesPublished', deliveries.length);
      },
    };
  }
}

/**
 * One invocation's publisher: the endpoints read at the first event it raises, and that reading
 * used for every event after it, so a batch of SQS messages (or a scheduled run) costs one read of
 * the WEBHOOKS partition, not one an event (one partition takes 3,000 strongly consistent reads a
 * second: read once an event, it stopped the service at 1,500 emails a second). The read stays
 * strongly consistent, so an endpoint saved before the invocation began gets its events; one saved
 * during it, from the next invocation. A failed read is not kept: the next event reads again.
 * Handlers start one per invocation, never per container (that would be a cache).
 */
export function readOncePerInvocation<D extends { events?: EventPublisher }>(deps: D): D {
  const { events } = deps;
  if (!events) return deps;
  let read: Promise<Subscriptions> | undefined;
  const once: EventPublisher = {
    subscriptions: () => {
      read ??= events.subscriptions().catch((error) => {
        read = undefined;
        throw error;
      });
      return read;
    },
  };
  return { ...deps, events: once };
}

/**
 * Publishes events where losing them is better than failing what raised them (an email accepted
 * by SES, a domain created): a failure is logged and counted (WebhookPublishFailed has an alarm),
 * never thrown. Events are built only when someone subscribes to their type (one read of the
 * endpoints per call, or per invocation through `readOncePerInvocation`).
 */
export async function publishQuietly(
  deps: { events?: EventPublisher; log?: Log; counters?: Counters },
  type: WebhookEventType,
  build: () => WebhookEvent[] | Promise<WebhookEvent[]>,
): Promise<void> {
  const { events } = deps;
  if (!events) return;
  try {
    const now = await events.subscriptions();
    if (!now.wants(type)) return;
    await now.publish(await build());
  } catch (error) {
    deps.counters?.count('WebhookPublishFailed');
    deps.log?.error('could not publish a webhook event', { type, error });
  }
}
