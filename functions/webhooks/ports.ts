import type { PageQuery } from '../shared/list.js';
import type {
  Delivery,
  Webhook,
  WebhookAttempt,
  WebhookEvent,
  WebhookEventType,
  WebhookMessage,
} from './model.js';

export interface WebhookRepository {
  /** Stores a new endpoint; false when the service already has MAX_WEBHOOKS of them. */
  create(webhook: Webhook): Promise<void>;
  get(id: string): Promise<Webhook | null>;
  list(query: PageQuery): Promise<{ data: Webhook[]; has_more: boolean }>;
  /** Every endpoint, read strongly consistent (the publisher reads it for every event it raises). */
  all(): Promise<Webhook[]>;
  /**
   * Writes the endpoint's own fields as given (its URL, events, status and why, secrets), if it
   * still exists; false when it was deleted meanwhile. What the delivery function writes beside
   * them (the failing mark, the breaker, the held mark) is kept as it is now, not as it was read,
   * unless `fresh`: then the failing mark and the breaker start afresh (the held mark stays, so
   * the held messages are put back).
   */
  save(webhook: Webhook, options?: { fresh?: boolean }): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** The message's state and one attempt, in one write. */
  recordAttempt(message: WebhookMessage, attempt?: WebhookAttempt): Promise<void>;
  getMessage(webhookId: string, messageId: string): Promise<WebhookMessage | null>;
  listMessages(webhookId: string, query: PageQuery): Promise<{ data: WebhookMessage[]; has_more: boolean }>;
  listAttempts(
    webhookId: string,
    messageId: string,
    query: PageQuery,
  ): Promise<{ data: WebhookAttempt[]; has_more: boolean }>;
}

/**
 * What the delivery function (and the requeue function's tending of held messages) writes on an
 * endpoint beside its own fields: the failing mark, the circuit breaker, the held mark, the
 * auto-disable. Apart from WebhookRepository, so the API functions load none of it.
 */
export interface WebhookBreakerRepository extends WebhookRepository {
  /**
   * Records a failed attempt on the endpoint: its first failure since the last success stands
   * (`failing_since`), and `weight` is added to its breaker's failures. Returns the endpoint as it
   * is now; null when it is gone or disabled.
   */
  failing(id: string, at: string, weight: number): Promise<Webhook | null>;
  /** Clears the failing mark and the breaker after a success. */
  recovered(id: string): Promise<void>;
  /**
   * Opens the breaker until `until`, its trip number `trips` (breaker.ts), unless it is open
   * already (paused until after `now`); false when it was.
   */
  pause(id: string, until: string, trips: number, now: string): Promise<boolean>;
  /**
   * Claims the one probe of a breaker whose pause (`pausedUntil`, as read) ended: false when it
   * was paused again, or another probe was claimed after `staleBefore`.
   */
  claimProbe(id: string, pausedUntil: string, at: string, staleBefore: string): Promise<boolean>;
  /** Marks the endpoint as having held messages (`held_at` = `token`); false when it is gone. */
  markHeld(id: string, token: string): Promise<boolean>;
  /** Clears the mark, unless it was set again since it read `token`. */
  clearHeld(id: string, token: string): Promise<void>;
  /** Disables a failing endpoint (unless it recovered or was changed meanwhile). */
  disable(id: string, reason: string, failingSince: string): Promise<boolean>;
}

/** The delivery queue: one message per (event, endpoint). */
export interface DeliveryQueue {
  /** Sends them, each hidden for `delaySeconds` first (at most 900, SQS's longest delay). */
  enqueue(deliveries: Delivery[], delaySeconds?: number): Promise<void>;
}

/** A message held while its endpoint's breaker is open (held.ts). */
export interface HeldMessage {
  webhook_id: string;
  message_id: string;
  /** The event's time: held messages are read oldest first. */
  created_at: string;
  /** The message to put back on the queue (with its attempts made); null when the item is unreadable. */
  delivery: Delivery | null;
  /**
   * This hold's own id: a message released and held again (its endpoint paused again before the
   * release took the first hold out) is a second item, so taking the first out leaves the second.
   */
  hold_id?: string;
}

/** Where an open breaker's messages wait, per endpoint, oldest event first. */
export interface WebhookHoldStore {
  /** Keeps them (holding the same message again changes nothing). */
  hold(deliveries: readonly Delivery[]): Promise<void>;
  /**
   * An endpoint's held messages, oldest first within each of the store's partitions (read side by
   * side), in pages, at most `limit` in all.
   */
  oldest(webhookId: string, limit: number): AsyncIterable<HeldMessage[]>[];
  /** Takes them out (those already gone are no error). */
  remove(held: readonly HeldMessage[]): Promise<void>;
}

/** A retry waiting in the table until it is due (see retries.ts). */
export interface ParkedRetry {
  /** When it is due (ISO UTC). */
  due_at: string;
  message_id: string;
  /** The message to put back on the queue (with its attempts made); null when the item is unreadable. */
  delivery: Delivery | null;
}

/** Where retries longer than the queue can hold wait, due by time. */
export interface WebhookRetryStore {
  /** Keeps it until it is due; parking the same message for the same time again changes nothing. */
  park(retry: ParkedRetry & { delivery: Delivery }): Promise<void>;
  /**
   * The retries due at or before `until` (ISO), in pages, at most `limit` in all. A page's retries
   * removed before the next page is read do not disturb the reading.
   */
  due(until: string, limit: number): AsyncIterable<ParkedRetry[]>;
  /**
   * The same, one reader per partition of the store, to be read side by side (each at most its
   * share of `limit`); `due` reads them one after the other.
   */
  dueByPartition(until: string, limit: number): AsyncIterable<ParkedRetry[]>[];
  /** Takes them out (those already gone are no error). */
  remove(retries: readonly Pick<ParkedRetry, 'due_at' | 'message_id'>[]): Promise<void>;
}

/** How an attempt went. */
export interface PostResult {
  /** The HTTP status, 0 when there was no answer. */
  status: number;
  durationMs: number;
  /** The start of the answer's body, or what went wrong. */
  response: string;
}

/** POSTs a signed message to an endpoint, refusing private and metadata addresses. */
export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
}

/** Checks an endpoint before it is saved: the scheme, and every address its name resolves to. */
export interface EndpointGuard {
  /** Undefined when the endpoint may be used, else why not. */
  check(url: string): Promise<string | undefined>;
}

/** Where the service's events go: every endpoint subscribed to them. */
export interface EventPublisher {
  /**
   * The endpoints as they are now (one strongly consistent read, never a list kept across
   * invocations), so an endpoint created, changed or deleted before the read takes effect for the
   * events published through it (publish.ts: an invocation reads once).
   */
  subscriptions(): Promise<Subscriptions>;
  /**
   * Keeps events that could not be published now (the endpoints unread, the queue refusing), to be
   * published late (republish.ts). Absent: there is nowhere to keep them.
   */
  keep?(events: readonly WebhookEvent[]): Promise<void>;
}

/** The endpoints read for the events raised now. */
export interface Subscriptions {
  /** Whether some enabled endpoint takes this type. */
  wants(type: WebhookEventType): boolean;
  /** One message per event and endpoint subscribed to its type. */
  publish(events: WebhookEvent[]): Promise<void>;
}

/** An event kept because it could not be published when it was raised (republish.ts). */
export interface KeptEvent {
  /** Where the store keeps it (its own reference, given back to `remove`). */
  ref: string;
  /** The event; null when the item is unreadable. */
  event: WebhookEvent | null;
}

/**
 * Where events wait that could not be published when they were raised (the endpoints could not be
 * read, or the delivery queue refused their messages), until the requeue-webhook-retries function
 * publishes them (republish.ts).
 */
export interface UnpublishedEvents {
  /** Keeps them; keeping the same event again changes nothing. */
  keep(events: readonly WebhookEvent[]): Promise<void>;
  /** The kept events, one reader per partition of the store (oldest first in each), at most `limit` in all. */
  keptByPartition(limit: number): AsyncIterable<KeptEvent[]>[];
  /** Takes them out (those already gone are no error). */
  remove(events: readonly KeptEvent[]): Promise<void>;
}
