import {
  type Requirement,
  TRANSITIONS,
  type Transition,
  type TransitionContext,
} from '../../emails/lifecycle.js';

/**
 * The lifecycle's requirements (emails/lifecycle.ts) as DynamoDB condition expressions on an email's
 * status item: a transition's write carries its condition, so it happens only where the lifecycle
 * allows it, atomically. test/integration/lifecycle.test.ts holds each one to `allows`.
 */
const EXPRESSIONS: Record<Requirement, string> = {
  exists: 'attribute_exists(pk)',
  queued: '#status = :queued',
  unsent: 'attribute_not_exists(sent_at)',
  sent: 'attribute_exists(sent_at)',
  unclaimed: 'attribute_not_exists(send_started_at)',
  claimed: 'attribute_exists(send_started_at)',
  ownClaim: 'send_started_at = :started',
  ownMark: '#claim = :mark',
  // ISO UTC times sort as text.
  due: '(attribute_not_exists(scheduled_at) OR scheduled_at <= :nowIso)',
  scheduled: 'attribute_exists(scheduled_at)',
  sameTime: 'scheduled_at = :scheduledAt',
  notRequeuedSince: '(attribute_not_exists(requeued_at) OR requeued_at < :notSince)',
  single: 'rcpts = :one',
  sentOrFinal: '(#status <> :queued OR attribute_exists(sent_at))',
};

export interface Condition {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** The condition of a transition's write, with the names and values it uses. */
export function conditionOf(transition: Transition, context: TransitionContext = {}): Condition {
  const requirements: readonly Requirement[] = TRANSITIONS[transition];
  const expression = requirements.map((r) => EXPRESSIONS[r]).join(' AND ');
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  if (expression.includes('#status')) names['#status'] = 'status';
  if (expression.includes('#claim')) names['#claim'] = 'claim';
  if (expression.includes(':queued')) values[':queued'] = 'queued';
  if (expression.includes(':one')) values[':one'] = 1;
  const need = (placeholder: string, value: unknown, what: string) => {
    if (!expression.includes(placeholder)) return;
    if (value === undefined) throw new Error(`${transition} needs ${what}`);
    values[placeholder] = value;
  };
  need(':started', context.attemptStartedAt, 'the attempt it concerns');
  need(':mark', context.claimMark, "the claim's mark");
  need(
    ':nowIso',
    context.nowMs === undefined ? undefined : new Date(context.nowMs).toISOString(),
    'the time',
  );
  need(':scheduledAt', context.scheduledAt, 'the scheduled time');
  need(':notSince', context.notSinceMs, 'the time of the last re-queue allowed');
  return {
    ConditionExpression: expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** A write's own names and values with its condition's. */
export function withCondition(
  condition: Condition,
  own: { names?: Record<string, string>; values?: Record<string, unknown> } = {},
) {
  const names = { ...condition.ExpressionAttributeNames, ...own.names };
  const values = { ...condition.ExpressionAttributeValues, ...own.values };
  return {
    ConditionExpression: condition.ConditionExpression,
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}
