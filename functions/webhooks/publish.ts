import type { Counters, Log } from '../shared/ports.js';
import { deliveryFor, type WebhookEvent, type WebhookEventType } from './model.js';
import type {
  DeliveryQueue,
  EventPublisher,
  Subscriptions,
  UnpublishedEvents,
  WebhookRepository,
} from './ports.js';

/**
 * Publishes the service's events: one delivery-queue message per (event, endpoint subscribed to
 * it), ten to a SendMessageBatch call. Each `subscriptions()` reads the endpoints (one strongly
 * consistent Query of their small partition, one read unit for up to 4 KB of them), so a webhook
 * created, updated or deleted before the read takes effect for what follows it; the functions that
 * raise events in batches read once an invocation (`readOncePerInvocation`). Events that could not
 * be published are kept in `unpublished`, when given, to be published late (republish.ts).
 */
export class WebhookPublisher implements EventPublisher {
  readonly keep?: (events: readonly WebhookEvent[]) => Promise<void>;

  constructor(
    private readonly deps: {
      webhooks: Pick<WebhookRepository, 'all'>;
      queue: DeliveryQueue;
      counters?: Counters;
      unpublished?: Pick<UnpublishedEvents, 'keep'>;
    },
  ) {
    const { unpublished } = deps;
    if (unpublished) this.keep = (events) => unpublished.keep(events);
  }

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
  const keep = events.keep?.bind(events);
  const once: EventPublisher = {
    subscriptions: () => {
      read ??= events.subscriptions().catch((error) => {
        read = undefined;
        throw error;
      });
      return read;
    },
    ...(keep ? { keep } : {}),
  };
  return { ...deps, events: once };
}

/** Reads of the endpoints one publishing makes (the SDK retries each) before its events are kept. */
export const ENDPOINT_READS = 3;
/** The pause before the second read; doubled before each later one, each between half and all of it. */
const READ_PAUSE_MS = 100;

/**
 * Publishes events where failing what raised them would be worse (an email accepted by SES, a
 * domain created): never throws. Events are built only when someone subscribes to their type (one
 * read of the endpoints per call, or per invocation through `readOncePerInvocation`).
 *
 * Nothing is dropped on a throttle: a read of the endpoints that fails is tried again
 * (ENDPOINT_READS in all); when it still fails, or the queue refuses the messages, the events are
 * kept (`events.keep`, counted WebhookEventsKept) and the requeue-webhook-retries function
 * publishes them within a minute (republish.ts). Lost, logged and counted WebhookPublishFailed
 * (which has an alarm), only what cannot be kept: events that could not be built (the email could
 * not be read back), or whose keeping failed too, or raised where there is nowhere to keep them.
 */
export async function publishQuietly(
  deps: { events?: EventPublisher; log?: Log; counters?: Counters },
  type: WebhookEventType,
  build: () => WebhookEvent[] | Promise<WebhookEvent[]>,
): Promise<void> {
  const { events } = deps;
  if (!events) return;
  let stage: 'read' | 'build' | 'publish' = 'read';
  let built: WebhookEvent[] = [];
  let failure: unknown;
  try {
    const now = await readEndpoints(events);
    if (!now.wants(type)) return;
    stage = 'build';
    built = await build();
    stage = 'publish';
    await now.publish(built);
    return;
  } catch (error) {
    failure = error;
  }
  if (stage !== 'build' && events.keep) {
    try {
      if (stage === 'read') built = await build();
      if (!built.length) return;
      await events.keep(built);
      deps.counters?.count('WebhookEventsKept', built.length);
      deps.log?.warn('could not publish webhook events now; kept, to be published within a minute', {
        type,
        error: failure,
      });
      return;
    } catch (error) {
      deps.log?.error('could not keep webhook events that could not be published', { type, error });
    }
  }
  deps.counters?.count('WebhookPublishFailed');
  deps.log?.error('could not publish a webhook event', { type, error: failure });
}

async function readEndpoints(events: EventPublisher): Promise<Subscriptions> {
  for (let read = 1; ; read++) {
    try {
      return await events.subscriptions();
    } catch (error) {
      if (read >= ENDPOINT_READS) throw error;
      const pauseMs = READ_PAUSE_MS * 2 ** (read - 1) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
