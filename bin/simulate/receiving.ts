/**
 * What received mail costs: SES's receiving charges, the content bucket (SES's write of the raw
 * message, the parser's read and writes, storage for receivedRetentionDays), receive-email's
 * invocation, the table's writes and the `email.received` webhook; per 1,000 messages and for a
 * flood of spam at a steady rate. Pure, like model.ts: `npm run simulate` prints it, test/unit/
 * simulate.test.ts checks it, docs/scale.md explains it.
 */
import { PLATFORM_LOG_BYTES, PRICES } from '../bench/cost.js';

export const RECEIVING_FIGURES = {
  // --- SES receiving, à la carte, us-east-1: AWS's Price List for AmazonSES (publication 2026-07-22),
  // usage types "Message (Receiving Email)" $0.0001 and "ReceivedChunk" $0.00009; aws.amazon.com/ses/pricing:
  // "$0.10 for every 1,000 emails received" and "$0.09 for every 1,000 incoming mail chunks" of 256 KB.
  sesPerMessage: 0.1 / 1000,
  sesPerChunk: 0.09 / 1000,
  /** An incoming mail chunk: 256 KB of a message; a part of one counts whole (assumed, as billing rounds up). */
  chunkBytes: 256 * 1024,

  // --- S3, us-east-1 (PRICES: PUT $0.005 and GET $0.0004 per 1,000; storage not in aws-facts.md: re-check)
  /** S3 Standard, first 50 TB: $0.023 per GB-month. */
  s3StoragePerGbMonth: 0.023,
  /**
   * Requests a message: SES's PutObject of the raw message (the bucket owner pays for it), the
   * parser's GetObject of it and PutObject of parsed.json (html, text, headers); one PutObject per
   * attachment is added by the mix.
   */
  s3PutsPerMessage: 2,
  s3GetsPerMessage: 1,
  /**
   * Bytes stored a message besides the raw one: its parts decoded again (parsed.json and the
   * attachments' bytes), about 3/4 of the raw size where it is base64 (assumed).
   */
  decodedShare: 0.75,

  // --- receive-email (lib/constructs/receiving.ts sizes it for 40 MB messages; 1,536 MB assumed here)
  receiveMemoryGb: 1.5,
  /** One invocation a message (SES's Lambda action): its raw read, parse, S3 writes, 3 table writes, the publish; assumed. */
  receiveSeconds: 0.25,
  /** Its JSON lines, Lambda's platform lines added below. */
  receiveLogBytes: 800,

  // --- The table (adapters/dynamodb/received-emails.ts): the claim by SES's message id, the email's
  // item (under 1 KB for a message of a few recipients and attachments), its notified mark; the
  // metrics' `received` counter (one ADD, metrics-store.ts).
  claimWriteUnits: 1,
  itemWriteUnits: 1,
  notifiedWriteUnits: 1,
  metricWriteUnits: 1,
  /** The publish's strongly consistent Query of the WEBHOOKS partition (one a message: SES invokes once a message). */
  endpointReadUnits: 1,

  // --- The webhook, for each endpoint subscribed to email.received (model.ts's figures for a message):
  // its put, then its state and its attempt (2.5 write units), the queue's send and its share of a
  // batch's receive and delete, the delivery function's share of a batch of 10 at 150 ms and 512 MB,
  // and its read of the endpoint (1 a batch).
  webhookWriteUnitsPerMessage: 2.5,
  webhookSqsRequestsPerMessage: 1 + 2 / 10,
  webhookInvocationsPerMessage: 1 / 10,
  webhookGbSecondsPerMessage: (0.15 / 10) * PRICES.lambdaMemoryGb,
  webhookReadUnitsPerMessage: 1 / 10,
} as const;

export type ReceivingFigures = { readonly [K in keyof typeof RECEIVING_FIGURES]: number };

/** What arrives: a message's size as SES counts it, its attachments, the endpoints taking email.received. */
export interface ReceivedMix {
  name: string;
  messageBytes: number;
  attachments: number;
  webhookEndpoints: number;
  /** receivedRetentionDays (default 30): how long its objects and items are kept. */
  retentionDays: number;
}

/** A message with an attachment: 50 KB, one endpoint. */
export const TYPICAL_RECEIVED: ReceivedMix = {
  name: 'a 50 KB message, 1 attachment',
  messageBytes: 50 * 1024,
  attachments: 1,
  webhookEndpoints: 1,
  retentionDays: 30,
};

/** Spam as it usually comes: small, no attachment; one endpoint still told of each. */
export const SPAM: ReceivedMix = {
  name: 'spam: 10 KB, no attachment',
  messageBytes: 10 * 1024,
  attachments: 0,
  webhookEndpoints: 1,
  retentionDays: 30,
};

/** SES's 256 KB chunks of a message: a part of one counts whole, and every message is at least one. */
export const chunksOf = (bytes: number, f: ReceivingFigures = RECEIVING_FIGURES) =>
  Math.max(1, Math.ceil(bytes / f.chunkBytes));

export interface ReceivingCostLine {
  item: string;
  dollars: number;
  arithmetic: string;
}

const money = (n: number) => `$${n.toFixed(2)}`;

/** Dollars per 1,000 received messages of the mix, by item, SES's own charges first. */
export function receivingCostPerThousand(
  mix: ReceivedMix,
  f: ReceivingFigures = RECEIVING_FIGURES,
): ReceivingCostLine[] {
  const k = 1_000;
  const chunks = chunksOf(mix.messageBytes, f);
  const puts = f.s3PutsPerMessage + mix.attachments;
  const storedBytes = mix.messageBytes * (1 + f.decodedShare);
  const months = mix.retentionDays / (365 / 12);
  const writes =
    f.claimWriteUnits +
    f.itemWriteUnits +
    f.notifiedWriteUnits +
    f.metricWriteUnits +
    mix.webhookEndpoints * f.webhookWriteUnitsPerMessage;
  const reads = f.endpointReadUnits + mix.webhookEndpoints * f.webhookReadUnitsPerMessage;
  const invocations = 1 + mix.webhookEndpoints * f.webhookInvocationsPerMessage;
  const gbSeconds =
    f.receiveMemoryGb * f.receiveSeconds + mix.webhookEndpoints * f.webhookGbSecondsPerMessage;
  const logBytes = f.receiveLogBytes + PLATFORM_LOG_BYTES * invocations;
  return [
    { item: 'SES, messages received', dollars: f.sesPerMessage * k, arithmetic: `1 × ${money(0.1)}/1,000` },
    {
      item: 'SES, 256 KB chunks',
      dollars: chunks * f.sesPerChunk * k,
      arithmetic: `${chunks} chunk${chunks === 1 ? '' : 's'} × ${money(0.09)}/1,000`,
    },
    {
      item: 'S3 requests',
      dollars: puts * PRICES.s3PerPut * k + f.s3GetsPerMessage * PRICES.s3PerGet * k,
      arithmetic: `${puts} PUT (SES's raw, parsed.json${mix.attachments ? `, ${mix.attachments} attachment` : ''}) × $0.005/1,000 + ${f.s3GetsPerMessage} GET × $0.0004/1,000`,
    },
    {
      item: `S3 storage, kept ${mix.retentionDays} days`,
      dollars: (storedBytes / 1024 ** 3) * months * f.s3StoragePerGbMonth * k,
      arithmetic: `${Math.round(storedBytes / 1024)} KB (raw + ${f.decodedShare} decoded) × ${months.toFixed(2)} months × $${f.s3StoragePerGbMonth}/GB-month`,
    },
    {
      item: 'Lambda (receive-email; webhook delivery)',
      dollars: (invocations * PRICES.lambdaPerRequest + gbSeconds * PRICES.lambdaPerGbSecond) * k,
      arithmetic: `${invocations.toFixed(2)} invocations × $0.20/M + ${gbSeconds.toFixed(3)} GB-s (${f.receiveMemoryGb * 1024} MB × ${f.receiveSeconds} s) × $0.0000133334`,
    },
    {
      item: 'DynamoDB writes and reads',
      dollars: (writes * PRICES.dynamoPerWriteUnit + reads * PRICES.dynamoPerReadUnit) * k,
      arithmetic: `${writes} write units (claim, item, notified, the received count${mix.webhookEndpoints ? `, ${f.webhookWriteUnitsPerMessage} the webhook message` : ''}) × $0.625/M + ${reads} read units × $0.125/M`,
    },
    {
      item: 'SQS (the webhook)',
      dollars: mix.webhookEndpoints * f.webhookSqsRequestsPerMessage * PRICES.sqsPerRequest * k,
      arithmetic: `${(mix.webhookEndpoints * f.webhookSqsRequestsPerMessage).toFixed(1)} requests × $0.40/M`,
    },
    {
      item: 'CloudWatch Logs',
      dollars: logBytes * PRICES.logsPerByte * k,
      arithmetic: `${Math.round(logBytes).toLocaleString('en-US')} bytes × $0.50/GB`,
    },
  ];
}

export const totalOf = (lines: ReceivingCostLine[]) => lines.reduce((sum, l) => sum + l.dollars, 0);

/** SES's own part of the lines (what no setting of this stack changes). */
export const sesPartOf = (lines: ReceivingCostLine[]) =>
  lines.filter((l) => l.item.startsWith('SES')).reduce((sum, l) => sum + l.dollars, 0);

/**
 * A flood at a steady rate (messages a minute, SES accepting them all: a domain with receiving
 * enabled takes mail to any address there) for an hour, a day and a 30-day month, in dollars: SES's
 * part and the rest, storage included for the days each message is kept.
 */
export function floodCost(
  perMinute: number,
  mix: ReceivedMix = SPAM,
  f: ReceivingFigures = RECEIVING_FIGURES,
) {
  const lines = receivingCostPerThousand(mix, f);
  const perMessage = totalOf(lines) / 1_000;
  const sesPerMessage = sesPartOf(lines) / 1_000;
  const messages = { hour: perMinute * 60, day: perMinute * 60 * 24, month: perMinute * 60 * 24 * 30 };
  const at = (n: number) => ({ messages: n, total: n * perMessage, ses: n * sesPerMessage });
  return {
    perMessage,
    hour: at(messages.hour),
    day: at(messages.day),
    month: at(messages.month),
    /** Concurrent receive-email executions the flood keeps busy. */
    concurrency: (perMinute / 60) * f.receiveSeconds,
    /** Table write units a second it takes. */
    writeUnitsPerSecond:
      (perMinute / 60) *
      (f.claimWriteUnits +
        f.itemWriteUnits +
        f.notifiedWriteUnits +
        f.metricWriteUnits +
        mix.webhookEndpoints * f.webhookWriteUnitsPerMessage),
  };
}
