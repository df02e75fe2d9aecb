/**
 * The domains' receiving adapters: the receipt-rule writer's queue (SQS FIFO, against SendMessage's
 * documented input with aws-sdk-client-mock) and the local DNS stand-in's MX answer; and the
 * receiving fields as the official SDK (resend) types them.
 */

import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import type { CreateDomainResponseSuccess, DomainApiOptions, ReceivingRecord } from 'resend';
import { beforeEach, describe, expect, it } from 'vitest';
import { PublicDns, PublishedDns } from '../../functions/adapters/dns/public-dns.js';
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

/**
 * A DNS server on 127.0.0.1 answering MX queries from a map (RFC 1035 wire format, by hand): a
 * name with records gets them, one without gets no answer (NODATA), `nx.test` NXDOMAIN and
 * `broken.test` SERVFAIL.
 */
async function dnsServer(records: Record<string, { exchange: string; priority: number }[]>) {
  const socket = createSocket('udp4');
  const encodeName = (name: string) =>
    Buffer.concat([
      ...name.split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)])),
      Buffer.from([0]),
    ]);
  socket.on('message', (query, peer) => {
    // The question: labels from offset 12, then type and class.
    const labels: string[] = [];
    let at = 12;
    while (query[at]) {
      labels.push(query.subarray(at + 1, at + 1 + (query[at] ?? 0)).toString());
      at += 1 + (query[at] ?? 0);
    }
    const question = query.subarray(12, at + 5);
    const name = labels.join('.');
    const answers = records[name] ?? [];
    const rcode = name === 'nx.test' ? 3 : name === 'broken.test' ? 2 : 0;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map(({ exchange, priority }) => {
      const rdata = Buffer.concat([Buffer.from([priority >> 8, priority & 0xff]), encodeName(exchange)]);
      const fixed = Buffer.alloc(12);
      fixed.writeUInt16BE(0xc00c, 0); // the question's name
      fixed.writeUInt16BE(15, 2); // MX
      fixed.writeUInt16BE(1, 4); // IN
      fixed.writeUInt32BE(300, 6);
      fixed.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([fixed, rdata]);
    });
    socket.send(Buffer.concat([header, question, ...rrs]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { server: `127.0.0.1:${socket.address().port}`, close: () => socket.close() };
}

describe('public DNS, MX records', () => {
  it("gives a name's MX records, none where it has none or does not exist, and throws when DNS cannot answer", async () => {
    const server = await dnsServer({
      'acme.test': [
        { exchange: 'inbound-smtp.eu-west-1.amazonaws.com', priority: 10 },
        { exchange: 'backup.acme.test', priority: 20 },
      ],
    });
    try {
      const dns = new PublicDns([server.server]);
      expect(await dns.mx('acme.test')).toEqual([
        { exchange: 'inbound-smtp.eu-west-1.amazonaws.com', priority: 10 },
        { exchange: 'backup.acme.test', priority: 20 },
      ]);
      expect(await dns.mx('empty.test')).toEqual([]);
      expect(await dns.mx('nx.test')).toEqual([]);
      await expect(dns.mx('broken.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    } finally {
      server.close();
    }
  });
});
