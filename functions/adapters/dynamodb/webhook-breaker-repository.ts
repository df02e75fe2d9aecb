import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Webhook } from '../../webhooks/model.js';
import type { WebhookBreakerRepository } from '../../webhooks/ports.js';
import { attributesIf, writeIf } from './client.js';
import { DynamoWebhookRepository, toWebhook } from './webhook-repository.js';

/**
 * The endpoints as the delivery function (and the requeue function's tending of held messages)
 * writes them: the failing mark, the circuit breaker (webhooks/breaker.ts), the held mark and the
 * auto-disable, each an UpdateItem of those attributes only, beside the endpoint's own fields. A
 * module of its own, so the API functions' builds carry none of it.
 */
export class DynamoWebhookBreakerRepository
  extends DynamoWebhookRepository
  implements WebhookBreakerRepository
{
  async failing(id: string, at: string, weight: number): Promise<Webhook | null> {
    const changed = await attributesIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression:
          'SET failing_since = if_not_exists(failing_since, :at), failures = if_not_exists(failures, :zero) + :weight',
        ConditionExpression: 'attribute_exists(pk) AND #status = :enabled',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':at': at, ':enabled': 'enabled', ':zero': 0, ':weight': weight },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return changed ? toWebhook(changed) : null;
  }

  async recovered(id: string): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'REMOVE failing_since, failures, paused_until, trips, probe_at',
        ConditionExpression:
          'attribute_exists(failing_since) OR attribute_exists(failures) OR attribute_exists(paused_until)',
      }),
    );
  }

  async pause(id: string, until: string, trips: number, now: string): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'SET paused_until = :until, trips = :trips, failures = :zero REMOVE probe_at',
        ConditionExpression:
          'attribute_exists(pk) AND #status = :enabled AND (attribute_not_exists(paused_until) OR paused_until <= :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':until': until,
          ':trips': trips,
          ':zero': 0,
          ':now': now,
          ':enabled': 'enabled',
        },
      }),
    );
  }

  async claimProbe(id: string, pausedUntil: string, at: string, staleBefore: string): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'SET probe_at = :at',
        ConditionExpression:
          '#status = :enabled AND paused_until = :paused AND (attribute_not_exists(probe_at) OR probe_at < :stale)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':at': at,
          ':paused': pausedUntil,
          ':stale': staleBefore,
          ':enabled': 'enabled',
        },
      }),
    );
  }

  async markHeld(id: string, token: string): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'SET held_at = :token',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':token': token },
      }),
    );
  }

  async clearHeld(id: string, token: string): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'REMOVE held_at',
        ConditionExpression: 'held_at = :token',
        ExpressionAttributeValues: { ':token': token },
      }),
    );
  }

  async disable(id: string, reason: string, failingSince: string): Promise<boolean> {
    return writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(id),
        UpdateExpression: 'SET #status = :disabled, disabled_reason = :reason',
        // Only if it still fails since then: a success in between cleared the mark.
        ConditionExpression: '#status = :enabled AND failing_since = :since',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':disabled': 'disabled',
          ':enabled': 'enabled',
          ':reason': reason,
          ':since': failingSince,
        },
      }),
    );
  }
}
