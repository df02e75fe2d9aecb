/**
 * Every AWS call the code makes for one email, as per-email terms: requests, DynamoDB write units
 * and read units, by function and operation (the rows `npm run bench` section 3 meters), each a
 * function of how full the batches are. One email is a one-recipient receipt sent with
 * POST /v1/emails, no webhook endpoint, request logs on (what the bench sends).
 *
 * `npm run simulate` (model.ts) takes its write and read units and its request counts from here;
 * test/unit/model-bench.test.ts holds these terms, evaluated at the fills of a recorded bench run
 * (bin/bench/recorded/cost.json, written by `npm run bench:record`), to that run within 5 %.
 * When the code changes what it calls, change its term here (and re-record). Pure: no I/O.
 */

/** How full the batches are: the bench's, measured, or the model's at a load. */
export interface BatchFill {
  /** Emails a send consumer invocation takes (1 to sendBatchSize). */
  sendBatch: number;
  /** SES events an events consumer invocation takes (1 to eventsBatchSize). */
  eventsBatch: number;
  /** Request-log lines a writer invocation takes (what a subscription delivers at once). */
  logLinesPerInvocation: number;
  /**
   * SES GetAccount reads per email: not a batch's fill but the fleet's reads divided by its emails
   * (at most one a second fleet-wide, in the pacing; the bench's short run shows its instances').
   */
  accountReadsPerEmail: number;
}

/** The code's per-call figures: change one where the code changes what it writes or reads. */
export const CALL_FIGURES = {
  // send-email (functions/api-keys/rate-limit.ts, emails/accept-send.ts)
  /**
   * The key's rate window: one UpdateItem, never a race (each window counts in an attribute of its
   * own); a second write only when the item shows stale counts, which a key in steady use never does.
   */
  keyWindowRaceShare: 0,
  /** Summary and deflated body (one BatchWriteItem): the receipt's 3 units. */
  contentWriteUnits: 3,
  /**
   * The search index's entries, written by the same BatchWriteItem (keys only, a unit each): the
   * sender's domain (on the summary) and the one recipient (on the body). Each further distinct
   * recipient or tag adds an item of its own and its entry, 2 more (adapters/dynamodb/email-keys.ts).
   */
  searchEntryWriteUnits: 2,
  /** The status item's conditional put (1) and its two listing index entries (time and status). */
  statusPutWriteUnits: 3,
  // process-send-queue (emails/deliver*.ts)
  /** The recipients' suppression entries: a BatchGetItem an email, eventually consistent. */
  suppressionReadUnits: 0.5,
  /** The attempt record, then the send: two UpdateItem of the status item (no index entry moves). */
  attemptWriteUnits: 2,
  /** The send schedule's UpdateItem, one a batch (SENDPACE). */
  paceWritesPerBatch: 1,
  /** The webhook endpoints' Query, strongly consistent, one a batch raising events (1 read unit). */
  endpointReadsPerBatch: 1,
  /** The email metrics' counters: `sent` (send consumer) and `delivered` (events consumer). */
  metricWritesPerEmail: 2,
  // process-ses-events (emails/events*.ts)
  sesEventsPerEmail: 2,
  /** Whether the batch's sends are recorded: each email's status item read, eventually consistent. */
  sentCheckReadUnits: 1,
  /** Delivered: the status item's UpdateItem (1) and its status index entry moved (2). */
  deliveredWriteUnits: 3,
  /** SQS DeleteMessageBatch takes 10 messages a call. */
  deleteBatchSize: 10,
  // write-request-logs (request-logs/, adapters/dynamodb/request-log-items.ts)
  /** Logs a BatchWriteItem takes (two groups of 12). */
  logsPerBatchWrite: 24,
  /** Logs whose bodies are compressed together. */
  logGroup: 12,
  /** A receipt send's log item without its bodies' slice (keys, summary, TTL, the holders' ids). */
  logSummaryBytes: 240,
  /** DynamoDB's own bytes per item stored. */
  itemOverheadBytes: 100,
  /** A receipt send's bodies brotli-compressed alone, and what each more receipt of a group adds. */
  logBodyFirstBytes: 1_400,
  logBodyNextBytes: 130,
} as const;
export type CallFigures = { readonly [K in keyof typeof CALL_FIGURES]: number };

export interface CallTerm {
  fn: string;
  op: string;
  requests: number;
  writeUnits: number;
  readUnits: number;
}

/**
 * Write units per log of a group of `g` receipt sends: each item a unit up to 1 KB, the group's
 * compressed bodies laid in the items' spare room (what is left past g KB costs its units more).
 * Fractional fills are interpolated between the whole groups around them.
 */
export function logWriteUnitsPerLog(fill: number, c: CallFigures = CALL_FIGURES): number {
  const whole = (g: number) => {
    const bytes = g * c.logSummaryBytes + c.logBodyFirstBytes + (g - 1) * c.logBodyNextBytes;
    return Math.max(g, Math.ceil(bytes / 1024)) / g;
  };
  const g = Math.max(1, Math.min(c.logGroup, fill));
  const low = Math.floor(g);
  const high = Math.ceil(g);
  return low === high ? whole(low) : whole(low) + (whole(high) - whole(low)) * (g - low);
}

/** Bytes stored per log of a group of `g` receipt sends: its item, its share of the group's bodies, DynamoDB's 100. */
export function logStoredBytesPerLog(fill: number, c: CallFigures = CALL_FIGURES): number {
  const g = Math.max(1, Math.min(c.logGroup, fill));
  return c.logSummaryBytes + c.itemOverheadBytes + (c.logBodyFirstBytes + (g - 1) * c.logBodyNextBytes) / g;
}

/** The per-email calls at a fill (requests by operation; SQS receives as one per delete, as on AWS). */
export function callsPerEmail(fill: BatchFill, c: CallFigures = CALL_FIGURES): CallTerm[] {
  const s = Math.max(1, fill.sendBatch);
  const e = Math.max(1, fill.eventsBatch);
  const l = Math.max(1, fill.logLinesPerInvocation);
  const t = (fn: string, op: string, requests: number, writeUnits = 0, readUnits = 0): CallTerm => ({
    fn,
    op,
    requests,
    writeUnits,
    readUnits,
  });
  const sendDeletes = Math.ceil(s / c.deleteBatchSize) / s;
  const eventDeletes = (c.sesEventsPerEmail * Math.ceil(e / c.deleteBatchSize)) / e;
  return [
    t(
      'send-email',
      'UpdateItem APIKEY (and a lost window start)',
      1 + c.keyWindowRaceShare,
      1 + c.keyWindowRaceShare,
    ),
    t('send-email', 'BatchWriteItem BODY+SUMMARY', 1, c.contentWriteUnits + c.searchEntryWriteUnits),
    t('send-email', 'PutItem STATUS', 1, c.statusPutWriteUnits),
    t('send-email', 'SQS SendMessage', 1),
    t(
      'write-request-logs',
      'BatchWriteItem LOG',
      Math.ceil(l / c.logsPerBatchWrite) / l,
      logWriteUnitsPerLog(l, c),
    ),
    t('process-send-queue', 'BatchGetItem SUPPRESSION', 1, 0, c.suppressionReadUnits),
    t(
      'process-send-queue',
      'Query webhook endpoints',
      c.endpointReadsPerBatch / s,
      0,
      c.endpointReadsPerBatch / s,
    ),
    t('process-send-queue', 'UpdateItem SENDPACE', c.paceWritesPerBatch / s, c.paceWritesPerBatch / s),
    t('process-send-queue', 'UpdateItem STATUS (attempt, sent)', 2, c.attemptWriteUnits),
    t('process-send-queue', 'UpdateItem metrics (sent)', 1, c.metricWritesPerEmail / 2),
    t('process-send-queue', 'SES SendEmail', 1),
    t('process-send-queue', 'SES GetAccount', fill.accountReadsPerEmail),
    t('process-send-queue', 'SQS DeleteMessageBatch', sendDeletes),
    t('(event source mappings)', 'SQS ReceiveMessage (send queue)', sendDeletes),
    t('SES → SNS → SQS', 'an event, published and delivered', c.sesEventsPerEmail),
    t('process-ses-events', 'BatchGetItem STATUS', c.sesEventsPerEmail / e, 0, c.sentCheckReadUnits),
    t(
      'process-ses-events',
      'Query webhook endpoints',
      (c.endpointReadsPerBatch * c.sesEventsPerEmail) / e,
      0,
      (c.endpointReadsPerBatch * c.sesEventsPerEmail) / e,
    ),
    t('process-ses-events', 'UpdateItem STATUS (delivered)', 1, c.deliveredWriteUnits),
    t('process-ses-events', 'UpdateItem metrics (delivered)', 1, c.metricWritesPerEmail / 2),
    t('process-ses-events', 'SQS DeleteMessageBatch', eventDeletes),
    t('(event source mappings)', 'SQS ReceiveMessage (events queue)', eventDeletes),
  ];
}

/** The totals of callsPerEmail: what the bench prints on its **all** row. */
export function totalsPerEmail(fill: BatchFill, c: CallFigures = CALL_FIGURES) {
  return callsPerEmail(fill, c).reduce(
    (sum, term) => ({
      requests: sum.requests + term.requests,
      writeUnits: sum.writeUnits + term.writeUnits,
      readUnits: sum.readUnits + term.readUnits,
    }),
    { requests: 0, writeUnits: 0, readUnits: 0 },
  );
}
