/**
 * Per-request time of a handler itself: the deployed handler modules (middy, zod, the use case,
 * the adapters), invoked with API Gateway's event shape, their AWS calls answered at once by
 * aws-sdk-client-mock with what DynamoDB and SQS would answer. What is left is the function's own
 * CPU per request, the part of Lambda's billed duration that is not waiting on AWS.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { context, httpEvent } from '../../test/support/events.js';
import { receipt } from './receipt.js';

type Handler = (event: unknown, context: unknown) => Promise<{ statusCode?: number }>;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function handlerLatency(requests = 5000, warmUp = 500) {
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    TABLE_NAME: 'bench',
    SEND_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/send',
    CONTENT_BUCKET: 'bench',
    RATE_LIMIT_PER_SECOND: '1000000',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  const { key, token } = generateApiKey('bench', 'full_access', new Date());
  const id = newEmailId();
  const created = new Date().toISOString();
  const content = receipt(1);
  const db = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  db.on(UpdateCommand).callsFake(
    (input: { Key: { sk: string }; ExpressionAttributeNames?: { '#c'?: string } }) =>
      input.Key.sk === 'APIKEY'
        ? {
            Attributes: {
              ...key,
              pk: `APIKEY#${key.hash}`,
              sk: 'APIKEY',
              [input.ExpressionAttributeNames?.['#c'] ?? 'rc']: 1,
            },
          }
        : { Attributes: {} },
  );
  db.on(GetCommand).resolves({ Item: { state: 'active', status: 'verified', sendable: true } });
  db.on(BatchWriteCommand).resolves({});
  db.on(PutCommand).resolves({});
  const status = {
    pk: `EMAIL#${id}`,
    sk: 'STATUS',
    status: 'delivered',
    created_at: created,
    rcpts: 1,
    sent_at: created,
  };
  const summary = {
    pk: `EMAIL#${id}`,
    sk: 'SUMMARY',
    from: content.from,
    to: [content.to],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: content.subject,
  };
  db.on(QueryCommand).callsFake((input: { IndexName?: string }) =>
    input.IndexName
      ? {
          Items: Array.from({ length: 20 }, () => ({
            pk: `EMAIL#${id}`,
            gsi1sk: id,
            status: 'delivered',
            created_at: created,
          })),
        }
      : {
          Items: [status, summary, { pk: `EMAIL#${id}`, sk: 'BODY', html: content.html, text: content.text }],
        },
  );
  db.on(BatchGetCommand).resolves({ Responses: { bench: [status, summary] } });
  sqs.on(SendMessageCommand).resolves({ MessageId: 'm' });

  const cases: { name: string; module: string; event: () => unknown }[] = [
    {
      name: 'POST /v1/emails (send-email)',
      module: 'send-email',
      event: () => httpEvent({ method: 'POST', path: '/v1/emails', token, body: receipt(2) }),
    },
    {
      name: 'GET /v1/emails/{id} (get-email)',
      module: 'get-email',
      event: () =>
        httpEvent({
          method: 'GET',
          path: `/v1/emails/${id}`,
          routeKey: 'GET /v1/emails/{id}',
          token,
          pathParameters: { id },
        }),
    },
    {
      name: 'GET /v1/emails (list-emails, 20 a page)',
      module: 'list-emails',
      event: () => httpEvent({ method: 'GET', path: '/v1/emails', token }),
    },
  ];
  const rows: string[] = [];
  for (const c of cases) {
    const { handler } = (await import(`../../functions/handlers/${c.module}.ts`)) as { handler: Handler };
    const times: number[] = [];
    for (let i = 0; i < warmUp + requests; i++) {
      const event = c.event();
      const t = performance.now();
      const response = await handler(event, context(c.module));
      if (i >= warmUp) times.push(performance.now() - t);
      if (response.statusCode !== 200) throw new Error(`${c.module} answered ${response.statusCode}`);
    }
    times.sort((a, b) => a - b);
    rows.push(`| ${c.name} | ${pct(times, 50).toFixed(2)} ms | ${pct(times, 99).toFixed(2)} ms |`);
  }
  db.restore();
  sqs.restore();
  return rows;
}
