import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeAwslogs } from '../../functions/adapters/cloudwatch-logs/awslogs.js';
import { DynamoRequestLogRepository } from '../../functions/adapters/dynamodb/request-log-repository.js';
import { makeHandler } from '../../functions/handlers/write-request-logs.js';
import { logIdOf, type RequestLogEntry, requestLogLine } from '../../functions/request-logs/model.js';

/**
 * The writer against DynamoDB's documented BatchWriteItem answers (aws-sdk-client-mock): what a
 * call leaves in `UnprocessedItems` (throttled partitions) is written again, and only that; a batch
 * DynamoDB never takes fails the invocation, so that Lambda's asynchronous retries deliver it again
 * (the items are keyed by log id: writing one twice changes nothing).
 */
const dynamo = mockClient(DynamoDBDocumentClient);
const TABLE = 'Table';
const repository = () =>
  new DynamoRequestLogRepository(
    DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
    TABLE,
  );
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A minute ago: well within the logs' retention (an older one is not stored). */
const T0 = Date.now() - 60_000;
const entry = (i: number): RequestLogEntry => ({
  id: logIdOf(`request-${i}`, T0 + i),
  created_at: new Date(T0 + i).toISOString(),
  method: 'POST',
  endpoint: '/v1/emails',
  response_status: i % 5 === 0 ? 422 : 200,
  user_agent: 'test',
  api_key_id: 'key_1',
  duration_ms: 1,
  request_body: '{"to":"a@example.com"}',
  response_body: '{"id":"em_1"}',
});
const event = (entries: RequestLogEntry[]) =>
  encodeAwslogs({
    messageType: 'DATA_MESSAGE',
    owner: '123456789012',
    logGroup: '/aws/lambda/send-email',
    logStream: '2026/01/01/[$LATEST]abc',
    subscriptionFilters: ['request-logs'],
    logEvents: entries.map((e, i) => ({ id: String(i), timestamp: 0, message: `${requestLogLine(e)}\n` })),
  });
type Put = { PutRequest: { Item: Record<string, unknown> } };
const idsOf = (requests: unknown) => (requests as Put[]).map((r) => String(r.PutRequest.Item.sk).slice(4));

beforeEach(() => dynamo.reset());
afterEach(() => vi.useRealTimers());

describe('the request-log writer and BatchWriteItem', () => {
  it('writes two groups of 12 logs a call (24 items), once each (a line delivered twice in a batch too), and retries exactly what was left unprocessed', async () => {
    const entries = Array.from({ length: 29 }, (_, i) => entry(i));
    const batch = [...entries, entries[3] as RequestLogEntry];
    let calls = 0;
    dynamo.on(BatchWriteCommand).callsFake((input) => {
      calls++;
      const requests = input.RequestItems[TABLE] as Put[];
      // The first call of 24 has 3 items throttled.
      return calls === 1 ? { UnprocessedItems: { [TABLE]: requests.slice(0, 3) } } : {};
    });
    const result = await makeHandler({ requestLogs: repository(), retentionDays: 30, log })(event(batch));
    expect(result).toEqual({ stored: 30, skipped: 0, expired: 0 });
    const sent = dynamo
      .commandCalls(BatchWriteCommand)
      .map((call) => call.args[0].input.RequestItems?.[TABLE]);
    expect(sent.map((requests) => requests?.length).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([3, 5, 24]);
    const first = sent.find((requests) => requests?.length === 24);
    const retry = sent.find((requests) => requests?.length === 3);
    expect(idsOf(retry)).toEqual(idsOf(first).slice(0, 3));
    // Every log written, each once but for the retried three.
    const written = sent.flatMap((requests) => idsOf(requests));
    expect(new Set(written)).toEqual(new Set(entries.map((e) => e.id)));
    expect(written).toHaveLength(32);
  });

  it('fails the invocation when DynamoDB keeps leaving items unprocessed (Lambda retries it), after backing off', async () => {
    vi.useFakeTimers();
    dynamo.on(BatchWriteCommand).callsFake((input) => ({ UnprocessedItems: input.RequestItems }));
    const done = makeHandler({ requestLogs: repository(), retentionDays: 30, log })(event([entry(1)]));
    const failed = expect(done).rejects.toThrow(/did not take the request logs/);
    await vi.advanceTimersByTimeAsync(10_000);
    await failed;
    expect(dynamo.commandCalls(BatchWriteCommand)).toHaveLength(7);
  });

  it("takes a failed batch back from its retry queue (Lambda's failure destination record) and leaves there what fails again", async () => {
    dynamo.on(BatchWriteCommand).resolves({});
    // What Lambda puts on the failure destination: the invocation record, the event in requestPayload.
    const record = (messageId: string, payload: unknown) => ({
      messageId,
      receiptHandle: 'r',
      body: JSON.stringify({
        version: '1.0',
        timestamp: '2026-01-01T00:00:00.000Z',
        requestContext: { requestId: 'x', condition: 'RetriesExhausted', approximateInvokeCount: 3 },
        requestPayload: payload,
        responseContext: { statusCode: 200, functionError: 'Unhandled' },
        responsePayload: { errorMessage: 'DynamoDB did not take the request logs after 6 retries' },
      }),
      attributes: {},
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:retries',
      awsRegion: 'us-east-1',
    });
    const handler = makeHandler({ requestLogs: repository(), retentionDays: 30, log });
    const stored = await handler({ Records: [record('m1', event([entry(1), entry(2)]))] } as never);
    expect(stored).toEqual({ batchItemFailures: [] });
    const written = dynamo
      .commandCalls(BatchWriteCommand)
      .flatMap((call) => idsOf(call.args[0].input.RequestItems?.[TABLE]));
    expect(written.sort()).toEqual([entry(1).id, entry(2).id].sort());
    // DynamoDB still refusing: the message stays on the queue for its next receive.
    vi.useFakeTimers();
    dynamo.reset();
    dynamo.on(BatchWriteCommand).callsFake((input) => ({ UnprocessedItems: input.RequestItems }));
    const again = handler({
      Records: [record('m2', event([entry(3)])), record('m3', { not: 'a batch' })],
    } as never);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await again).toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
  });

  it('with requestLogBodies=false writes no body, even of a line that carries them; a log past its retention is not written; the TTL is its request plus the retention', async () => {
    dynamo.on(BatchWriteCommand).resolves({});
    const now = Date.now();
    const lined = {
      ...entry(1),
      request_body: '{"to":["alice.private@example.com"],"html":"<p>diagnosis</p>"}',
    };
    const expired = {
      ...entry(2),
      id: logIdOf('request-old', now - 8 * 86_400_000),
      created_at: new Date(now - 8 * 86_400_000).toISOString(),
    };
    const handler = makeHandler({
      requestLogs: repository(),
      retentionDays: 7,
      bodies: false,
      log,
      now: () => now,
    });
    expect(await handler(event([lined, expired, entry(3)]))).toEqual({ stored: 2, skipped: 0, expired: 1 });
    const items = dynamo
      .commandCalls(BatchWriteCommand)
      .flatMap((call) => (call.args[0].input.RequestItems?.[TABLE] ?? []) as Put[])
      .map((request) => request.PutRequest.Item);
    expect(items.map((item) => String(item.sk).slice(4))).toEqual([lined.id, entry(3).id]);
    expect(JSON.stringify(items)).not.toMatch(/alice|diagnosis|em_1/);
    for (const [item, written] of items.map((item, i) => [item, [lined, entry(3)][i]] as const)) {
      expect(item.z).toBeUndefined();
      expect(item.expires_at).toBe(Math.floor(Date.parse(String(written?.created_at)) / 1000) + 7 * 86_400);
    }
  });
});
