/**
 * What a broadcast costs and how long it takes (issue 41): one email per contact, created by the
 * fan-out in pages (adapters/dynamodb/email-store.ts createMany with mayExist), put on the
 * broadcast lane (SQS, SendMessageBatch of 10), sent by the lane's consumer with the send
 * consumer's code, then recorded from SES's events like any email, with the broadcast's tally
 * (recipient items and totals) and the email metrics' counters. Each term is per email, counted
 * from the code and the design (docs/scale.md "Broadcasts" says which), priced with bench/cost.ts's
 * PRICES (shared/notes/aws-facts.md, us-east-1). Pure, like model.ts: `npm run simulate` prints it,
 * test/unit/simulate.test.ts checks it, and test/integration/broadcast-writes.test.ts holds the
 * createMany terms to what the code writes in the emulated table.
 */

import { PRICES } from '../bench/cost.js';
import { AUDIENCE_FIGURES, segmentListing } from './audience.js';
import { CALL_FIGURES } from './calls.js';
import { DEFAULT_SETUP, FIGURES } from './model.js';

export const BROADCAST_FIGURES = {
  // --- The email of each contact (createMany, mayExist: content by BatchWriteItem, then each
  // status item by a conditional PutItem).
  /** The rendered HTML and text of one contact's email (a newsletter; assumed), in bytes. */
  bodyBytes: 12_000,
  /** What deflate leaves of it (email-items.ts storedBodies; an email's HTML shrinks 3 to 10 times: a quarter, assumed). */
  deflatedShare: 0.25,
  /** The body item's other attributes: keys, the search entry's keys, the expiry (bytes, from email-items.ts). */
  bodyItemOverheadBytes: 200,
  /** The summary item (from, to, subject, reply_to, broadcast_id, topic_id, the search entry's keys): under 1 KB. */
  summaryWriteUnits: 1,
  /** The search index's entries: the sender's domain (summary) and the one recipient (body). */
  searchEntryWriteUnits: CALL_FIGURES.searchEntryWriteUnits,
  /** The status item's conditional put (1) and its listing entries by time and by status (2). */
  statusPutWriteUnits: CALL_FIGURES.statusPutWriteUnits,

  // --- The fan-out: a page of the segment's members at a time, then its checkpoint.
  /** Contacts a page (the segment listing's page). */
  pageSize: AUDIENCE_FIGURES.pageSize,
  /** A page's time on AWS: the listing (50 ms), rendering, createMany, the lane's batches side by side, the checkpoint (assumed). */
  pageMs: 250,
  /** The checkpoint: one UpdateItem of the broadcast item (its fan-out progress) a page. */
  checkpointWritesPerPage: 1,
  /** A topic's choices of a page's contacts: BatchGetItem, eventually consistent, half a unit each. */
  choiceReadUnits: 0.5,
  /** The fan-out keeps the lane this many seconds of sending ahead (its pacing), then waits. */
  aheadSeconds: 60,
  /** A fan-out step ends this long before the worker's timeout, and takes at most this many pages (assumed: 60 s of pages). */
  pagesPerStep: 240,
  /** A step's reads besides the pages: the broadcast item, its 8 totals shards, the stored SES quota (read units). */
  stepReadUnits: 2,
  /** A step's fan-out message: SendMessage, ReceiveMessage, DeleteMessage. */
  stepSqsRequests: 3,
  fanOutMemoryGb: 0.5,

  // --- The lane (SQS): the job carries the content (under JOB_INLINE_MAX_BYTES, 60 KB).
  /** The job's other bytes: id, addresses, subject, headers, JSON's escapes (assumed). */
  jobOverheadBytes: 1_200,
  laneBatch: 10,
  /** SQS bills each 64 KB chunk of a request's payload as a request (sends and receives). */
  sqsChunkBytes: 65_536,

  // --- The lane's consumer: the send consumer's terms (calls.ts), and the gate's reads for a
  // broadcast email: its contact (global unsubscribe) and, with a topic, the topic and its choice.
  gateReadUnitsNoTopic: 0.5,
  gateReadUnitsTopic: 1.5,

  // --- The tally (design: adapters/dynamodb/broadcast-tally.ts): a recipient item for the type
  // and an ADD on one of the 8 totals shards, each under 1 KB.
  tallySentWriteUnits: 2,
  tallyDeliveredWriteUnits: 2,
  /** An open: the recipient item's count and the totals (opened, unique_opened in one ADD). */
  tallyOpenWriteUnits: 2,
  /** A click: the recipient item's links, the totals, the first-click mark, the link's counter. */
  tallyClickWriteUnits: 4,
  /** An open or a click also writes its event item (1) and the email metrics' counter (1). */
  eventWriteUnits: 2,

  /** Held per email for the email's retention: the email's items, its index entries and its 2 recipient items (bytes, assumed). */
  otherStoredBytes: 1_500,
} as const;
export type BroadcastFigures = { readonly [K in keyof typeof BROADCAST_FIGURES]: number };

/** A broadcast to send: its size, the account's SES rate and quota, and what its contacts do. */
export interface BroadcastCase {
  recipients: number;
  /** SES's MaxSendRate (emails/s). */
  sesRate: number;
  /** SES's Max24HourSend (-1: unlimited). */
  quota24h: number;
  /** The part of the rate transactional mail takes meanwhile (0 to 1): it goes first. */
  transactionalShare: number;
  /** With a topic (the gate reads the choice too). */
  topic: boolean;
  /** Opens and clicks per email (tracked), each a distinct event. */
  opensPerEmail: number;
  clicksPerEmail: number;
}

export const MILLION: BroadcastCase = {
  recipients: 1_000_000,
  sesRate: 1_000,
  quota24h: -1,
  transactionalShare: 0,
  topic: true,
  opensPerEmail: 0,
  clicksPerEmail: 0,
};

/** The write units of one broadcast email, term by term (per email). */
export function writeUnitsPerBroadcastEmail(c: BroadcastCase, f: BroadcastFigures = BROADCAST_FIGURES) {
  const bodyItemBytes = f.bodyBytes * f.deflatedShare + f.bodyItemOverheadBytes;
  const terms: [string, number][] = [
    ['createMany: summary item', f.summaryWriteUnits],
    [
      `createMany: body item (${Math.round(bodyItemBytes).toLocaleString('en-US')} bytes)`,
      Math.ceil(bodyItemBytes / 1024),
    ],
    ['createMany: search index entries (sender domain, recipient)', f.searchEntryWriteUnits],
    ['createMany: status item and its 2 listing entries', f.statusPutWriteUnits],
    ['fan-out checkpoint (one a page)', f.checkpointWritesPerPage / f.pageSize],
    ['lane: the send schedule (one a batch)', CALL_FIGURES.paceWritesPerBatch / DEFAULT_SETUP.sendBatchSize],
    ['lane: attempt and sent (status item)', CALL_FIGURES.attemptWriteUnits],
    ['SES events: delivered (status item and its status entry)', CALL_FIGURES.deliveredWriteUnits],
    ['email metrics: sent, delivered', CALL_FIGURES.metricWritesPerEmail],
    ['tally: sent (recipient item, totals)', f.tallySentWriteUnits],
    ['tally: delivered (recipient item, totals)', f.tallyDeliveredWriteUnits],
    [
      'opens and clicks (event, metrics, tally)',
      c.opensPerEmail * (f.eventWriteUnits + f.tallyOpenWriteUnits) +
        c.clicksPerEmail * (f.eventWriteUnits + f.tallyClickWriteUnits),
    ],
  ];
  return { terms, total: terms.reduce((sum, [, n]) => sum + n, 0) };
}

/** How long a broadcast takes: the pace it is sent at, when the fan-out is done and when the last email leaves. */
export function broadcastTimes(c: BroadcastCase, f: BroadcastFigures = BROADCAST_FIGURES) {
  const fanOutRate = f.pageSize / (f.pageMs / 1000);
  const free = c.sesRate * (1 - c.transactionalShare);
  const rate = Math.min(free, fanOutRate);
  // Past the 24-hour quota the broadcast waits for it (SES's window rolls: a day's worth a day).
  const days = c.quota24h < 0 || c.recipients <= c.quota24h ? 0 : Math.ceil(c.recipients / c.quota24h) - 1;
  const last = c.recipients - days * Math.max(0, c.quota24h);
  const sendSeconds = days * 86_400 + last / rate;
  return {
    fanOutRate,
    rate,
    quotaDays: days,
    sendSeconds,
    // The fan-out stays about aheadSeconds ahead of the sends: it is done that long before the end.
    fanOutSeconds: Math.max(c.recipients / fanOutRate, sendSeconds - f.aheadSeconds),
    bound: rate < free ? 'the fan-out' : days > 0 ? "SES's 24-hour quota" : "SES's rate",
  };
}

/**
 * The write units a second on the broadcast's own partition (`BROADCAST#<id>`: its 8 totals shards
 * and its links are sort keys of one partition key, table.ts), at the pace it is sent: each email's
 * sent and delivered ADD a unit each, an open one, a click two (the totals and the link's counter).
 * A partition takes 1,000 a second until DynamoDB splits it for heat.
 */
export function totalsPartitionWrites(c: BroadcastCase, f: BroadcastFigures = BROADCAST_FIGURES): number {
  const perEmail = 2 + c.opensPerEmail + 2 * c.clicksPerEmail;
  return broadcastTimes(c, f).rate * perEmail;
}

export interface BroadcastCostLine {
  item: string;
  dollars: number;
  arithmetic: string;
}

/** What 1,000 emails of a broadcast cost on AWS, SES aside ($0.10 more à la carte). */
export function broadcastCostPerThousand(
  c: BroadcastCase,
  f: BroadcastFigures = BROADCAST_FIGURES,
): BroadcastCostLine[] {
  const k = 1_000;
  const writes = writeUnitsPerBroadcastEmail(c, f).total;
  const listing = segmentListing(f.pageSize);
  const stepEmails = Math.max(
    f.pageSize,
    Math.min(f.pagesPerStep * f.pageSize, broadcastTimes(c, f).rate * f.aheadSeconds),
  );
  const reads =
    listing.readUnitsPerPage / f.pageSize +
    (c.topic ? f.choiceReadUnits : 0) +
    f.stepReadUnits / stepEmails +
    CALL_FIGURES.suppressionReadUnits +
    (c.topic ? f.gateReadUnitsTopic : f.gateReadUnitsNoTopic) +
    CALL_FIGURES.endpointReadsPerBatch / DEFAULT_SETUP.sendBatchSize +
    CALL_FIGURES.sentCheckReadUnits;
  const batchBytes = f.laneBatch * (f.bodyBytes + f.jobOverheadBytes);
  const laneChunks = Math.ceil(batchBytes / f.sqsChunkBytes) / f.laneBatch;
  const events = FIGURES.sesEventsPerEmail + c.opensPerEmail + c.clicksPerEmail;
  // The lane: its sends and receives by 64 KB chunk, a delete a batch; SES's events delivered, received and deleted; the fan-out's steps.
  const sqs =
    2 * laneChunks +
    1 / DEFAULT_SETUP.sendBatchSize +
    events +
    (2 * events) / FIGURES.eventsBatchSize +
    f.stepSqsRequests / stepEmails;
  const invocations = 1 / stepEmails + 1 / DEFAULT_SETUP.sendBatchSize + events / FIGURES.eventsBatchSize;
  const gbSeconds =
    (f.fanOutMemoryGb * f.pageMs) / 1000 / f.pageSize +
    FIGURES.memoryGb *
      (FIGURES.sendBatchSeconds / DEFAULT_SETUP.sendBatchSize +
        (FIGURES.eventsBatchSeconds * events) / FIGURES.eventsBatchSize);
  const months = DEFAULT_SETUP.emailRetentionDays / (365 / 12);
  const stored = f.bodyBytes * f.deflatedShare + f.otherStoredBytes;
  return [
    {
      item: 'DynamoDB writes (on demand)',
      dollars: writes * PRICES.dynamoPerWriteUnit * k,
      arithmetic: `${writes.toFixed(2)} units × $0.625/M`,
    },
    {
      item: 'DynamoDB reads (on demand)',
      dollars: reads * PRICES.dynamoPerReadUnit * k,
      arithmetic: `${reads.toFixed(2)} units (the segment's page ${(listing.readUnitsPerPage / f.pageSize).toFixed(2)}, ${c.topic ? 'choices 0.5, ' : ''}suppressions 0.5, the gate ${c.topic ? f.gateReadUnitsTopic : f.gateReadUnitsNoTopic}, the sends' check 1, …) × $0.125/M`,
    },
    {
      item: 'SQS requests',
      dollars: sqs * PRICES.sqsPerRequest * k,
      arithmetic: `${sqs.toFixed(2)} requests (the lane ${(2 * laneChunks).toFixed(2)}: 10 jobs of ${((f.bodyBytes + f.jobOverheadBytes) / 1000).toFixed(1)} KB a batch, ${Math.ceil(batchBytes / f.sqsChunkBytes)} chunks of 64 KB sent and received) × $0.40/M`,
    },
    {
      item: "SNS publishes (SES's events)",
      dollars: events * PRICES.snsPerPublish * k,
      arithmetic: `${events} × $0.50/M`,
    },
    {
      item: 'Lambda requests and duration',
      dollars: invocations * PRICES.lambdaPerRequest * k + gbSeconds * PRICES.lambdaPerGbSecond * k,
      arithmetic: `${invocations.toFixed(3)} invocations × $0.20/M + ${gbSeconds.toFixed(4)} GB-s × $0.0000133334 (a page ${f.pageMs} ms for ${f.pageSize})`,
    },
    {
      item: 'CloudWatch Logs',
      dollars: FIGURES.logBytesPerEmail * PRICES.logsPerByte * k,
      arithmetic: `${FIGURES.logBytesPerEmail.toLocaleString('en-US')} bytes (a receipt's, no request log) × $0.50/GB`,
    },
    {
      item: `Storage, kept ${DEFAULT_SETUP.emailRetentionDays} days (with PITR)`,
      dollars: (stored / 1024 ** 3) * months * (FIGURES.storagePerGbMonth + FIGURES.pitrPerGbMonth) * k,
      arithmetic: `${Math.round(stored).toLocaleString('en-US')} bytes × ${months.toFixed(2)} months × ($0.25 + $0.20)/GB-month`,
    },
  ];
}

/** The total of the lines. */
export const totalOfLines = (lines: readonly BroadcastCostLine[]) =>
  lines.reduce((sum, l) => sum + l.dollars, 0);
