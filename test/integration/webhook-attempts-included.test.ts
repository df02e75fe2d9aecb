import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { makeHandler as listAttemptsHandler } from '../../functions/handlers/list-webhook-attempts.js';
import { makeHandler as listEventsHandler } from '../../functions/handlers/list-webhook-events.js';
import {
  MOST_ATTEMPTS_INCLUDED,
  messageId,
  newAttemptId,
  newWebhookId,
  type WebhookMessage,
} from '../../functions/webhooks/model.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * A webhook's page in the console shows a page of messages and each one's attempts: with
 * `include=attempts` that is one request, not one per message.
 */
let table: TestTable;
let token: string;
let repos: ReturnType<typeof createRepositories>;
const webhookId = newWebhookId();
const T0 = Date.parse('2026-11-28T09:00:00.000Z');

beforeAll(async () => {
  table = await startTestTable('t-attempts-included');
  repos = createRepositories(table.tableName, table.db);
  const made = generateApiKey('attempts', 'full_access', new Date(T0));
  token = made.token;
  await repos.apiKeys.put(made.key);
  await repos.webhooks.create({
    id: webhookId,
    endpoint: 'https://hooks.acme.test/email',
    events: ['email.delivered'],
    status: 'enabled',
    created_at: new Date(T0).toISOString(),
    signing_secret: 'whsec_MfKQ9r8GKYqXxgmbVj1uRHJcqNSz3pWfT8l2Z6x0aBc=',
  });
  // Six messages: the i-th with i attempts, and one with more than are included.
  for (const i of [0, 1, 2, 3, 4, MOST_ATTEMPTS_INCLUDED + 2]) {
    const created_at = new Date(T0 + i * 1000).toISOString();
    const message: WebhookMessage = {
      id: messageId(webhookId, { created_at, key: `k${i}` }),
      webhook_id: webhookId,
      type: 'email.delivered',
      created_at,
      status: i ? 'success' : 'pending',
      next_attempt_at: null,
      attempts: i,
      body: `{"n":${i}}`,
    };
    await repos.webhooks.recordAttempt(message);
    for (let a = 0; a < i; a++)
      await repos.webhooks.recordAttempt(message, {
        id: newAttemptId(),
        message_id: message.id,
        sent_at: new Date(T0 + i * 1000 + a).toISOString(),
        http_status_code: a === i - 1 ? 200 : 500,
        duration_ms: 10 + a,
        response: a === i - 1 ? 'ok' : 'not now',
      });
  }
}, 60_000);
afterAll(() => table.stop());

const get = (handler: ReturnType<typeof listEventsHandler>, path: string, pathParameters: object) => {
  const [route, search] = path.split('?');
  return handler(
    httpEvent({
      method: 'GET',
      path: route ?? path,
      token,
      pathParameters: pathParameters as Record<string, string>,
      query: Object.fromEntries(new URLSearchParams(search)),
    }),
    context(),
  );
};

describe('GET /v1/webhooks/{id}/events?include=attempts', () => {
  it('lists each message with its newest attempts, as its own attempts route answers them', async () => {
    const events = listEventsHandler({ ...repos });
    const attempts = listAttemptsHandler({ ...repos });
    const listed = parseBody(
      await get(events, `/v1/webhooks/${webhookId}/events?include=attempts&limit=10`, { id: webhookId }),
    );
    expect(listed.data).toHaveLength(6);
    for (const message of listed.data) {
      const own = parseBody(
        await get(attempts, `/v1/webhooks/${webhookId}/events/${message.id}/attempts?limit=100`, {
          id: webhookId,
          event_id: message.id,
        }),
      );
      expect(own.data).toHaveLength(message.attempts);
      expect(message.recent_attempts).toEqual(own.data.slice(0, MOST_ATTEMPTS_INCLUDED));
    }
    expect(listed.data.map((m: { recent_attempts: unknown[] }) => m.recent_attempts.length)).toEqual([
      MOST_ATTEMPTS_INCLUDED,
      4,
      3,
      2,
      1,
      0,
    ]);
  });

  it('without it, the list is as before; another include is refused', async () => {
    const events = listEventsHandler({ ...repos });
    const plain = parseBody(await get(events, `/v1/webhooks/${webhookId}/events`, { id: webhookId }));
    expect(plain.data[0]).not.toHaveProperty('recent_attempts');
    const refused = await get(events, `/v1/webhooks/${webhookId}/events?include=payload`, { id: webhookId });
    expect(refused.statusCode).toBe(400);
  });
});
