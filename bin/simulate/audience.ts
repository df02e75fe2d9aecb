/**
 * What the audience costs and how long its big operations take: a contact, its memberships and
 * topic choices in write units; importing a million contacts (one import's steps run one after the
 * other, each a TransactWriteItems of a chunk and its checkpoint); listing a 1,000,000-contact
 * segment page by page (a sorted merge over CONTACT_SHARDS partitions of the time index, then the
 * page's contacts by BatchGetItem). Pure, like model.ts: `npm run simulate` prints it,
 * test/unit/simulate.test.ts checks it, docs/scale.md explains it.
 */
import { CONTACT_SHARDS } from '../../functions/adapters/dynamodb/table.js';
import { AUDIENCE_QUEUES } from '../../functions/shared/audience-queues.js';
import { PRICES } from '../bench/cost.js';

export const AUDIENCE_FIGURES = {
  // --- Items (adapters/dynamodb/audience-items.ts), each under 1 KB: a write unit each, two in a
  // transaction ("transactional write requests ... two writes per item": DynamoDB developer guide,
  // "Capacity management for transactions"); an index entry a write unit of its own (assumed
  // standard, as index updates are propagated after the transaction).
  /** The contact item (by address) and its entry in the time index (CONTACTS#<shard>). */
  contactItems: 1,
  contactIndexEntries: 1,
  /** The small item by id that names its address. */
  contactIdItems: 1,
  /** A membership: its item in the contact's partition and its entry under SEGMENT#<id>#<shard>. */
  membershipIndexEntries: 1,
  /** A topic choice: its item and its entry under TOPIC#<id>#<shard> (the status index). */
  choiceIndexEntries: 1,
  /** Bytes held for a contact (its item, index entry and id item), and for each membership or choice (item and entry); assumed. */
  contactBytes: 800,
  linkBytes: 300,
  /** DynamoDB Standard storage, us-east-1: $0.25 per GB-month. */
  storagePerGbMonth: 0.25,

  // --- An import step: chunks written one after the other, each one TransactWriteItems of at most
  // 100 actions (the chunk's items and the checkpoint), after one BatchGetItem of the chunk's
  // existing contacts (on_conflict); both assumed at 25 ms on AWS.
  transactionItems: 100,
  transactionMs: 25,
  batchGetMs: 10,
  /** A step ends this long before the worker's timeout (its margin), then queues the next. */
  stepMarginSeconds: 20,
  workerMemoryGb: 0.5,

  // --- Listing a segment: pages of 100 (the API's largest); each page reads up to a page from each
  // shard (the merge), its id items and contacts (two BatchGetItem of 100, eventually consistent),
  // three round trips of about 10 ms plus the function's own 20 ms, assumed.
  pageSize: 100,
  indexEntryBytes: 150,
  listPageMs: 50,
} as const;

export type AudienceFigures = { readonly [K in keyof typeof AUDIENCE_FIGURES]: number };

/** A contact as an import or the API writes it: in `segments` segments, with `topics` topic choices. */
export interface ContactShape {
  segments: number;
  topics: number;
}

/** The write units one new contact takes, written in one transaction with its memberships and choices. */
export function writeUnitsPerContact(shape: ContactShape, f: AudienceFigures = AUDIENCE_FIGURES) {
  const items = f.contactItems + f.contactIdItems + shape.segments + shape.topics;
  const entries =
    f.contactIndexEntries + shape.segments * f.membershipIndexEntries + shape.topics * f.choiceIndexEntries;
  return { items, transactional: 2 * items + entries, plain: items + entries };
}

/** Importing `rows` rows of this shape: rows a transaction, their pace, the time and the cost. */
export function importOf(rows: number, shape: ContactShape, f: AudienceFigures = AUDIENCE_FIGURES) {
  const { items } = writeUnitsPerContact(shape, f);
  // One action of the 100 is the checkpoint.
  const rowsPerTransaction = Math.floor((f.transactionItems - 1) / items);
  const transactions = Math.ceil(rows / rowsPerTransaction);
  const seconds = (transactions * (f.transactionMs + f.batchGetMs)) / 1000;
  const stepSeconds = AUDIENCE_QUEUES.contactImports.timeoutSeconds - f.stepMarginSeconds;
  const steps = Math.ceil(seconds / stepSeconds);
  const writeUnits = rows * writeUnitsPerContact(shape, f).transactional + transactions * 2;
  // The upsert's look at each row's existing contact: half a read unit (eventually consistent).
  const readUnits = rows * 0.5;
  const cost = {
    dynamodb: writeUnits * PRICES.dynamoPerWriteUnit + readUnits * PRICES.dynamoPerReadUnit,
    lambda: seconds * f.workerMemoryGb * PRICES.lambdaPerGbSecond + steps * PRICES.lambdaPerRequest,
    sqs: steps * 3 * PRICES.sqsPerRequest,
    s3: steps * PRICES.s3PerGet,
  };
  return {
    rowsPerTransaction,
    rowsPerSecond: rows / seconds,
    seconds,
    steps,
    writeUnits,
    writeUnitsPerSecond: writeUnits / seconds,
    // Index entries spread over CONTACT_SHARDS partitions each (1,000 write units a second each).
    shardHeadroom: (CONTACT_SHARDS * 1000) / ((rows / seconds) * Math.max(1, shape.segments)),
    cost,
    total: Object.values(cost).reduce((sum, c) => sum + c, 0),
    storageGb: (rows * (f.contactBytes + (shape.segments + shape.topics) * f.linkBytes)) / 1e9,
  };
}

/** Listing a segment of `members` contacts to its end, page by page. */
export function segmentListing(members: number, f: AudienceFigures = AUDIENCE_FIGURES) {
  const pages = Math.ceil(members / f.pageSize);
  // The merge reads at most a page from each shard: eventually consistent, 4 KB a half unit.
  const indexReadUnits = Math.ceil((CONTACT_SHARDS * f.pageSize * f.indexEntryBytes) / 4096) * 0.5;
  const itemReadUnits = 2 * f.pageSize * 0.5;
  const readUnitsPerPage = indexReadUnits + itemReadUnits;
  const perPage =
    readUnitsPerPage * PRICES.dynamoPerReadUnit +
    PRICES.apiGatewayPerRequest +
    PRICES.lambdaPerRequest +
    (f.listPageMs / 1000) * PRICES.lambdaMemoryGb * PRICES.lambdaPerGbSecond;
  return {
    pages,
    readUnitsPerPage,
    seconds: (pages * f.listPageMs) / 1000,
    cost: pages * perPage,
  };
}
