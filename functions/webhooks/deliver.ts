import type { Clock, Counters, Log } from '../shared/ports.js';
import { failureWeight, hasBreakerState, pauseMs, trips } from './breaker.js';
import {
  type Delivery,
  FAILING_DISABLES_AFTER_MS,
  MAX_RESPONSE_KEPT,
  newAttemptId,
  retryDelaySeconds,
  signedHeaders,
  signingSecrets,
  type Webhook,
  type WebhookAttempt,
  type WebhookMessage,
} from './model.js';
import type { WebhookBreakerRepository, WebhookSender } from './ports.js';

export interface DeliverWebhookDeps {
  webhooks: Pick<WebhookBreakerRepository, 'recordAttempt' | 'failing' | 'recovered' | 'disable' | 'pause'>;
  sender: WebhookSender;
  clock: Clock;
  counters?: Counters;
  log?: Log;
}

export type AttemptOutcome = (
  | { result: 'success' }
  /** Failed; the next attempt is due after `delaySeconds`, at `nextAttemptAt` (ISO). */
  | { result: 'retry'; delaySeconds: number; nextAttemptAt: string }
  /** Failed, and that was the last attempt. */
  | { result: 'failed' }
  /** Not attempted: the endpoint was deleted or disabled since the event was published. */
  | { result: 'dropped'; why: 'deleted' | 'disabled' }
) & {
  /** The endpoint as a failed attempt left it (its breaker's state): what the batch's next messages see. */
  endpoint?: Webhook;
};

const DISABLED_REASON = (since: string) =>
  `every attempt since ${since} failed (no 2xx for ${FAILING_DISABLES_AFTER_MS / 86_400_000} days); ` +
  'fix the endpoint, then PATCH {"status":"enabled"}';

/**
 * One attempt at one message: sign it with the endpoint's secrets as they are now, POST it, and
 * record the attempt and the message's state in one write. A 2xx is a success; anything else is
 * retried on the schedule (webhooks.ts) until the last attempt, then the message is `failed`. An
 * endpoint whose attempts have all failed for FAILING_DISABLES_AFTER_MS is disabled.
 *
 * A failed attempt adds to the endpoint's breaker (breaker.ts), and opens it at its threshold; a
 * failed `probe` opens it again, for longer. A success closes it.
 *
 * `attempt` is 1-based (attemptNumber: the attempts made before the message was last parked, and
 * the queue's receive count); a replay gets one attempt only.
 */
export async function deliverWebhook(
  deps: DeliverWebhookDeps,
  delivery: Delivery,
  attempt: number,
  webhook: Webhook | null,
  probe = false,
): Promise<AttemptOutcome> {
  if (!webhook) return { result: 'dropped', why: 'deleted' };
  const number = (delivery.replay?.previous_attempts ?? 0) + attempt;
  const message: WebhookMessage = {
    id: delivery.message_id,
    webhook_id: webhook.id,
    type: delivery.type,
    created_at: delivery.created_at,
    status: 'failed',
    next_attempt_at: null,
    attempts: number - 1,
    body: delivery.body,
  };
  if (webhook.status !== 'enabled') {
    await deps.webhooks.recordAttempt(message);
    return { result: 'dropped', why: 'disabled' };
  }

  const now = deps.clock.now();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'email-service-webhooks/1.0',
    ...signedHeaders(
      signingSecrets(webhook, now.getTime()),
      delivery.message_id,
      Math.floor(now.getTime() / 1000),
      delivery.body,
    ),
  };
  const answer = await deps.sender.post(webhook.endpoint, headers, delivery.body);
  const ok = answer.status >= 200 && answer.status < 300;
  const record: WebhookAttempt = {
    id: newAttemptId(),
    message_id: delivery.message_id,
    sent_at: now.toISOString(),
    http_status_code: answer.status,
    duration_ms: Math.round(answer.durationMs),
    response: answer.response.slice(0, MAX_RESPONSE_KEPT),
  };
  message.attempts = number;

  if (ok) {
    deps.counters?.count('WebhookAttemptsSucceeded');
    await deps.webhooks.recordAttempt({ ...message, status: 'success' }, record);
    if (hasBreakerState(webhook)) {
      await deps.webhooks.recovered(webhook.id);
      if (webhook.paused_until)
        deps.log?.info('webhook endpoint resumed: its probe succeeded', { webhook_id: webhook.id });
    }
    return { result: 'success' };
  }

  deps.counters?.count('WebhookAttemptsFailed');
  const delaySeconds = delivery.replay ? undefined : retryDelaySeconds(attempt);
  const failedAt = deps.clock.now();
  const nextAttemptAt =
    delaySeconds === undefined ? null : new Date(failedAt.getTime() + delaySeconds * 1000).toISOString();
  await deps.webhooks.recordAttempt(
    nextAttemptAt === null ? message : { ...message, status: 'attempting', next_attempt_at: nextAttemptAt },
    record,
  );
  if (delaySeconds === undefined) deps.counters?.count('WebhookMessagesFailed');
  deps.log?.warn('webhook attempt failed', {
    webhook_id: webhook.id,
    message_id: delivery.message_id,
    attempt: number,
    http_status_code: answer.status,
    next_attempt_in_seconds: delaySeconds ?? null,
  });

  let endpoint =
    (await deps.webhooks.failing(webhook.id, failedAt.toISOString(), failureWeight(answer.status))) ??
    undefined;
  const since = endpoint?.failing_since;
  if (since && failedAt.getTime() - Date.parse(since) >= FAILING_DISABLES_AFTER_MS) {
    if (await deps.webhooks.disable(webhook.id, DISABLED_REASON(since), since)) {
      deps.counters?.count('WebhooksDisabled');
      deps.log?.warn('webhook endpoint disabled after failing for days', { webhook_id: webhook.id, since });
      endpoint = { ...webhook, status: 'disabled' };
    }
  } else if (endpoint && (probe || trips(endpoint, failedAt.getTime()))) {
    const trip = (endpoint.trips ?? 0) + 1;
    const until = new Date(failedAt.getTime() + pauseMs(trip)).toISOString();
    if (await deps.webhooks.pause(webhook.id, until, trip, failedAt.toISOString())) {
      deps.counters?.count('WebhookEndpointsPaused');
      deps.log?.warn('webhook endpoint paused by its circuit breaker', {
        webhook_id: webhook.id,
        paused_until: until,
        trips: trip,
      });
      const { probe_at: _, ...rest } = endpoint;
      endpoint = { ...rest, paused_until: until, trips: trip, failures: 0 };
    }
  }
  return delaySeconds === undefined || nextAttemptAt === null
    ? { result: 'failed', endpoint }
    : { result: 'retry', delaySeconds, nextAttemptAt, endpoint };
}
