import type { Domain } from '../domains.js';
import { emailIdTime } from '../ids.js';
import type { Clock, Counters, DeliveryQueue, EventPublisher, Log, WebhookRepository } from '../ports.js';
import { deliveryFor, type Webhook, type WebhookEvent, type WebhookEventType } from '../webhooks.js';

/**
 * How long a container trusts its list of endpoints before reading it again. A new endpoint, or a
 * new subscription, receives events within this time; a deleted or disabled one stops at once (the
 * delivery function reads the endpoint before each attempt and drops what it no longer wants).
 */
export const ENDPOINTS_TTL_MS = 15_000;

/**
 * Publishes the service's events: one delivery-queue message per (event, endpoint subscribed to
 * it). The endpoints are read once per ENDPOINTS_TTL_MS per container, so an event nobody
 * subscribes to costs no AWS call at all, and one that somebody does costs its queue messages (ten
 * to a SendMessageBatch call).
 */
export class WebhookPublisher implements EventPublisher {
  private cached?: { until: number; list: Promise<Webhook[]> };

  constructor(
    private readonly deps: {
      webhooks: Pick<WebhookRepository, 'all'>;
      queue: DeliveryQueue;
      clock: Clock;
      counters?: Counters;
      ttlMs?: number;
    },
  ) {}

  private endpoints(): Promise<Webhook[]> {
    const now = this.deps.clock.now().getTime();
    if (!this.cached || this.cached.until <= now) {
      const list = this.deps.webhooks.all();
      this.cached = { until: now + (this.deps.ttlMs ?? ENDPOINTS_TTL_MS), list };
      // A failed read is not remembered: the next event reads again.
      list.catch(() => {
        if (this.cached?.list === list) this.cached = undefined;
      });
    }
    return this.cached.list;
  }

  private async subscribers(type: WebhookEventType) {
    return (await this.endpoints()).filter((w) => w.status === 'enabled' && w.events.includes(type));
  }

  async wants(type: WebhookEventType): Promise<boolean> {
    return (await this.subscribers(type)).length > 0;
  }

  async publish(events: WebhookEvent[]): Promise<void> {
    const deliveries = [];
    for (const event of events)
      for (const webhook of await this.subscribers(event.type))
        deliveries.push(deliveryFor(webhook.id, event));
    if (!deliveries.length) return;
    await this.deps.queue.enqueue(deliveries);
    this.deps.counters?.count('WebhookMessagesPublished', deliveries.length);
  }
}

/** What an email event says about its email (Resend's `data`, less the recipients and the detail). */
export interface EmailFacts {
  email_id: string;
  from: string;
  subject: string;
  tags: Record<string, string>;
  /** The provider's message id, once it has one. */
  message_id?: string;
}

/**
 * An email event in Resend's shape: `data` has the email's id, its creation time, the sender as
 * sent, the recipients the event concerns, the subject, the provider's message id and the tags as
 * an object, then the event's own detail (`bounce`, `failed`, `suppressed`).
 */
export function emailEvent(
  type: Extract<WebhookEventType, `email.${string}`>,
  at: string,
  facts: EmailFacts,
  to: readonly string[],
  detail: Record<string, unknown> = {},
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${facts.email_id}|${at}|${[...to].sort().join(',')}`,
    data: {
      email_id: facts.email_id,
      created_at: new Date(emailIdTime(facts.email_id)).toISOString(),
      from: facts.from,
      to: [...to],
      subject: facts.subject,
      ...(facts.message_id ? { message_id: facts.message_id } : {}),
      tags: facts.tags,
      ...detail,
    },
  };
}

/** A domain event: Resend's domain object (with its records) under `data`. */
export function domainEvent(
  type: Extract<WebhookEventType, `domain.${string}`>,
  at: string,
  domain: Domain,
  region: string,
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${domain.id}|${at}|${domain.status}`,
    data: {
      id: domain.id,
      name: domain.domain,
      status: domain.status,
      created_at: domain.created_at,
      region,
      records: domain.records,
    },
  };
}

/** Tags as Resend's events carry them: `{name: value}`. */
export const tagsObject = (tags: readonly { name: string; value: string }[]): Record<string, string> =>
  Object.fromEntries(tags.map((t) => [t.name, t.value]));

/**
 * Publishes events where losing them is better than failing what raised them (an email accepted
 * by SES, a domain created): a failure is logged and counted (WebhookPublishFailed has an alarm),
 * never thrown. Events are built only when someone subscribes to their type.
 */
export async function publishQuietly(
  deps: { events?: EventPublisher; log?: Log; counters?: Counters },
  type: WebhookEventType,
  build: () => WebhookEvent[] | Promise<WebhookEvent[]>,
): Promise<void> {
  const { events } = deps;
  if (!events) return;
  try {
    if (!(await events.wants(type))) return;
    await events.publish(await build());
  } catch (error) {
    deps.counters?.count('WebhookPublishFailed');
    deps.log?.error('could not publish a webhook event', { type, error });
  }
}
