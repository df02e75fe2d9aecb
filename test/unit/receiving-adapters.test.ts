/**
 * The domains' receiving adapters: the receipt-rule writer's queue (SQS FIFO, against SendMessage's
 * documented input with aws-sdk-client-mock) and the local DNS stand-in's MX answer; and the
 * receiving fields as the official SDK (resend) types them.
 */

import { readFileSync } from 'node:fs';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import type { CreateDomainResponseSuccess, DomainApiOptions, ReceivingRecord } from 'resend';
import { beforeEach, describe, expect, it } from 'vitest';
import { PublishedDns } from '../../functions/adapters/dns/public-dns.js';
import { SqsReceiptRuleSync } from '../../functions/adapters/sqs/receipt-rule-sync.js';
import { createDomainSchema, DEFAULT_SETTINGS, toDomainBody } from '../../functions/domains/model.js';
import { receivingRecord } from '../../functions/domains/receiving.js';
import { RECEIVING_REGIONS } from '../../functions/domains/receiving-regions.js';

const sqs = mockClient(SQSClient);
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/EmailService-receipt-rules.fifo';

beforeEach(() => sqs.reset());

describe('the receipt-rule sync request', () => {
  it("is one message in the one group 'rules', never deduplicated away", async () => {
    sqs.on(SendMessageCommand).resolves({ $metadata: {}, MessageId: 'm', SequenceNumber: '1' });
    const sync = new SqsReceiptRuleSync(new SQSClient({ region: 'eu-west-1' }), QUEUE);
    await sync.request('domain dom_1 receiving enabled');
    await sync.request('domain dom_1 receiving enabled');
    const inputs = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(inputs).toHaveLength(2);
    for (const input of inputs)
      expect(input).toEqual({
        QueueUrl: QUEUE,
        MessageBody: JSON.stringify({ reason: 'domain dom_1 receiving enabled' }),
        MessageGroupId: 'rules',
        MessageDeduplicationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    // The same request twice is two requests: each must run after the change before it.
    expect(inputs[0]?.MessageDeduplicationId).not.toBe(inputs[1]?.MessageDeduplicationId);
  });

  it("throws SQS's refusal, for the caller to log", async () => {
    sqs.on(SendMessageCommand).rejects(new Error('AWS.SimpleQueueService.NonExistentQueue'));
    const sync = new SqsReceiptRuleSync(new SQSClient({ region: 'eu-west-1' }), QUEUE);
    await expect(sync.request('x')).rejects.toThrow('NonExistentQueue');
  });
});

describe('the local DNS stand-in', () => {
  it("answers a receiving domain's MX with the Region's inbound host, as if published", async () => {
    const dns = new PublishedDns(undefined, 'eu-west-1');
    expect(await dns.mx()).toEqual([{ exchange: 'inbound-smtp.eu-west-1.amazonaws.com', priority: 10 }]);
    expect(await dns.cname()).toEqual([]);
    expect(await new PublishedDns('front.test', 'us-east-1').cname()).toEqual(['front.test']);
  });
});

describe("the official SDK's view of receiving", () => {
  it('takes its create options, and reads our capabilities and Receiving record as it types them', () => {
    const options: DomainApiOptions = { name: 'acme.test', capabilities: { receiving: 'enabled' } };
    expect(createDomainSchema.parse(options).settings.receiving).toBe(true);
    const record = receivingRecord('acme.test', 'us-east-1', 'pending');
    // The SDK's ReceivingRecord (an MX with its priority).
    const sdkRecord: ReceivingRecord = record;
    expect(sdkRecord.priority).toBe(10);
    const at = '2026-11-22T03:29:55.214Z';
    const body = toDomainBody(
      {
        id: 'dom_1',
        domain: 'acme.test',
        created_at: at,
        checked_at: at,
        status: 'pending',
        sendable: false,
        ...DEFAULT_SETTINGS,
        receiving: true,
        records: [record],
      },
      'us-east-1',
    );
    // The SDK's DomainCapabilities: both fields, each 'enabled' | 'disabled'.
    const capabilities: CreateDomainResponseSuccess['capabilities'] = body.capabilities;
    expect(capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(body.records).toEqual([
      {
        record: 'Receiving',
        type: 'MX',
        name: 'acme.test',
        value: 'inbound-smtp.us-east-1.amazonaws.com',
        priority: 10,
        ttl: 'Auto',
        status: 'pending',
      },
    ]);
  });
});

it('docs/api.md names the Regions that receive as receiving-regions.ts keeps them', () => {
  const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  expect(docs).toContain(`): ${RECEIVING_REGIONS.join(', ')}.`);
});
