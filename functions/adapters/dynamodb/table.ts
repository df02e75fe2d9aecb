/**
 * The single table: generic key attributes, key builders and index names in one place.
 * Read by the repositories, the CDK stack and the local runtime, so all three agree.
 *
 * | item                | pk               | sk        | gsi1 (emails-by-time-keys) | gsi2 (emails-by-status) |
 * |---------------------|------------------|-----------|----------------------------|-------------------------|
 * | email status        | EMAIL#<id>       | STATUS    | EMAILS#<shard> / <id>      | EMAILS#<status>#<shard> / <id> |
 * |   (scheduled, until sent or final: gsi3 (emails-by-due) DUE#<shard> / <scheduled_at>#<id>)              |
 * | email summary       | EMAIL#<id>       | SUMMARY   |  (gsi4 (emails-by-search) SEARCH#from#<sender domain>#<shard> / <id>) |
 * | email bodies        | EMAIL#<id>       | BODY      |  (gsi4 SEARCH#to#<first recipient>#<shard> / <id>) |
 * | email search entry  | EMAIL#<id>       | SEARCH#to#<address> or SEARCH#tag#<name>:<value> | (gsi4 SEARCH#<kind>#<value>#<shard> / <id>) |
 * | email event         | EMAIL#<id>       | EVENT#<at>#<type>#<digest> |      |                           |
 * | api key (lookup; rate shard 0: its windows' counts rc<window>, last_used_at; rs: its other shards) | APIKEY#<sha256> | APIKEY | | |
 * | api key rate shard k ≥ 1 (a copy of what authentication reads, rc<window>, last_used_at; or a revoked tombstone) | APIKEY#<sha256>#<k> | APIKEY | | |
 * | api key (listing)   | APIKEYS          | APIKEY#<id> |                     |                           |
 * | idempotency key     | IDEMP#<key id>#<sha256> | IDEMP |                    |                           |
 * | email share link (its token's hash, the email, its expiry, its view window) | SHARE#<sha256> | SHARE | | |
 * | domain              | DOMAINS          | DOMAIN#<id> |                     |                           |
 * | domain name         | DOMAINNAME#<name> | DOMAINNAME |                    |                           |
 * | retired config. set | RETIREDSETS      | SET#<name>  |                     |                           |
 * | template            | TEMPLATES        | TEMPLATE#<id> |                   |                           |
 * | published template  | TEMPLATE#<id>    | PUBLISHED   |                     |                           |
 * | template alias      | TEMPLATEALIAS#<alias> | TEMPLATEALIAS |              |                           |
 * | sweeper progress    | SWEEP            | SWEEP     |                       |                           |
 * | scheduler progress  | SCHEDULE         | SHARD#<partition> |               |                           |
 * | send schedule (next free moment at the SES rate) | SENDPACE | SENDPACE |     |                           |
 * | the account's SES limits (read for all consumers) | SENDPACE | SES_ACCOUNT |  |                           |
 * | suppression         | SUPPRESSION#<address> | SUPPRESSION | SUPPRESSIONS / <id> | SUPPRESSIONS#<origin> / <id> |
 * | webhook endpoint    | WEBHOOKS         | WEBHOOK#<id> |                    |                           |
 * | webhook message     | WEBHOOK#<id>#<shard> | MSG#<msg id> |                |                           |
 * | webhook attempt     | WEBHOOK#<id>#<shard> | ATTEMPT#<msg id>#<attempt id> | |                          |
 * |   (written before sharding: WEBHOOK#<id>, still read)                                                   |
 * | parked webhook retry | WHRETRY#<shard> | <due at>#<msg id> |               |                           |
 * | unpublished event   | WHUNPUB#<shard>  | <created at>#<event key> |        |                           |
 * | contact (by its address, lower-cased: the send gate's one read) | CONTACT#<address> | CONTACT | CONTACTS#<shard> / <id> | |
 * | contact id (its address)   | CONTACTID#<id>   | CONTACTID |                     |                           |
 * | contact's segment membership | CONTACTOF#<contact id> | SEGMENT#<segment id> | SEGMENT#<segment id>#<shard> / <contact id> | |
 * | contact's topic choice     | CONTACTOF#<contact id> | TOPIC#<topic id> |      | TOPIC#<topic id>#<shard> / <contact id> |
 * | segment             | SEGMENTS         | SEGMENT#<id> |                     |                           |
 * | topic               | TOPICS           | TOPIC#<id> |                       |                           |
 * | contact property    | CONTACTPROPS     | PROP#<id>  |                       |                           |
 * | contact property key | CONTACTPROPKEY#<key> | CONTACTPROPKEY |             |                           |
 * | contact import      | IMPORTS          | IMPORT#<id> |                      |                           |
 * | broadcast (its content, status, generation and fan-out progress) | BROADCASTS | BROADCAST#<id> | |           |
 * | broadcast totals (one shard of its counters) | BROADCAST#<id>#TOTALS#<shard> | TOTALS |  |              |
 * | broadcast clicked link (url, clicks, unique clicks) | BROADCAST#<id> | LINK#<url digest> |  |               |
 * | broadcast recipient of a type | BRECIPIENTS#<id>#<type>#<shard> | <address>#<email id> | |               |
 * | first click of a recipient on a link | BCLICK#<id>#<email id> | LINK#<url digest> | |                     |
 * | local dev key (local only) | LOCAL#DEV_API_KEY | LOCAL |                   |                           |
 * | request log         | LOG#<id>         | LOG       | LOGS#<shard> / LOG#<id> | LOGS#<2xx…5xx>#<shard> / LOG#<id> |
 *
 * An email's index keys and expiry are written only through email-keys.ts, which spreads its
 * emails over `shards` partitions of each index (and reads the unsharded ones of tables written
 * before sharding: `EMAILS`, `EMAILS#<status>`, `DUE`). Its items expire by TTL (`expires_at`).
 *
 * Domains share one partition (an account has at most 10,000 SES identities), so listing them is
 * one strongly consistent Query; the small name item makes the name unique (a conditional put) and
 * answers the send path's "is this sender's domain verified?" with one GetItem.
 *
 * The status item is the only one that changes after creation, and it stays small (~250 bytes, and
 * at most about 600 with 50 recipients' outcomes as number sets of positions, under 1 KB with the
 * event that settled a one-recipient email), so a status change costs one write unit. The time
 * index holds keys only, so a status change does not touch it; the status index moves the entry
 * from one status partition to another (and projects status and created_at).
 *
 * Webhook endpoints share one partition (at most MAX_WEBHOOKS), so the publisher reads them all
 * with one Query (once an invocation); an endpoint's messages and attempts are spread over the
 * layout's `shards` partitions of its own (a hash of the message id, a message's attempts in its
 * shard; webhook-repository.ts), listed newest first by their time-sortable ids, and expire after
 * WEBHOOK_MESSAGE_RETENTION_DAYS (TTL).
 *
 * Webhook retries too long to wait on the queue are parked until due (webhooks/retries.ts) under WEBHOOK_RETRY_SHARDS partitions, the shard a digest of the message id,
 * so their writes spread over as many partitions; each partition sorts them by due time, and the
 * scheduler reads those due with one Query per partition (no index).
 *
 * Contacts (functions/contacts, segments, topics, contact-properties, contact-imports: the audience
 * concepts; adapters/dynamodb/audience-items.ts writes and reads their items). A contact is one item
 * keyed by its address, lower-cased (one per address; the send gate's and the API's lookup by
 * address is one GetItem), with a small item by id naming its address (a lookup by id is two). Its
 * segment memberships and topic choices are items of their own in a partition of the contact's id
 * (never one growing item; an address change moves only the contact item), each in an overloaded
 * listing index under a partition of its segment or topic sharded CONTACT_SHARDS ways by the
 * contact id, sorted by contact id (a UUIDv7), so a million-member segment is listed page by page
 * (a sorted merge over the shards) and cleaned up off the request path without a scan. Contacts are
 * listed the same way under CONTACTS#<shard>. Property values are kept by the property's id
 * (`props`), so a deleted property vanishes from every contact at once, and one re-created under its
 * key starts empty. Segments, topics, properties and imports each share one partition (an account has
 * a few hundred at most), listed newest first by their UUIDv7 ids.
 *
 * The two listing indexes are overloaded: suppressions are listed through them under partitions of
 * their own (all, and per origin), sorted by their time-sortable ids like emails. They are not
 * sharded: entries come from bounces and complaints, a few in a hundred emails at most (SES reviews
 * an account past 5 % bounces), well within one partition's 1,000 writes a second at 10,000 emails/s.
 */

import type { IndexKey } from '../../shared/function-spec.js';
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

/**
 * How many partitions parked webhook retries are spread over: each takes 1,000 writes a second,
 * so 8 park 8,000 retries a second; the scheduler reads each one every run.
 */
export const WEBHOOK_RETRY_SHARDS = 8;

/**
 * How many partitions events kept to be published late (webhooks/republish.ts) are spread over,
 * the shard a digest of the event's key: 8 keep 8,000 events a second.
 */
export const UNPUBLISHED_EVENT_SHARDS = 8;

/**
 * How many partitions each webhook endpoint's messages (and their attempts) are spread over, the
 * shard a hash of the message id: 64 take 25,600 messages a second an endpoint (2.5 write units a
 * message), 12,800 emails a second on two events each. Fixed, not a setting: a message is read
 * back from the shard its id names, so the count must never change under messages already written.
 */
export const WEBHOOK_MESSAGE_SHARDS = 64;

/**
 * The shard of an id among `shards`: FNV-1a of it, cheap, stable across runtimes, and even over
 * UUIDv7's random bits. Emails' index keys, webhook messages and parked retries are spread by it.
 */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The partition a message's parked retries go to: by its id, so the same message always lands in the same one. */
/**
 * Partitions of one endpoint's held messages (webhook-held-store.ts): 8,000 held a second an
 * endpoint at DynamoDB's 1,000 writes a second a partition.
 */
export const WEBHOOK_HELD_SHARDS = 8;

export const webhookRetryShard = (messageId: string): number => shardOf(messageId, WEBHOOK_RETRY_SHARDS);

/** Epoch seconds after which DynamoDB's TTL deletes an item (emails and their events, idempotency keys, webhook messages). */
export const TTL_ATTRIBUTE = 'expires_at';

/**
 * How many partitions of each listing index request logs are spread over (all of them, and each
 * status class), the shard a hash of the log id: an index entry is one write unit (keys, and the
 * status index's created_at), so 16 take 16,000 requests a second, all of one class. Fixed, not a
 * setting: the listing reads exactly these partitions.
 */
export const LOG_SHARDS = 16;

/**
 * How many partitions of a listing index contacts, a segment's members and a topic's choices are
 * spread over, the shard a hash of the contact id: 16 take 16,000 writes a second (an import into
 * one segment). Fixed, not a setting: the listings read exactly these partitions.
 */
export const CONTACT_SHARDS = 16;

/**
 * Broadcasts (issue 41): the items are in the table comment's rows. A broadcast's counters are
 * BROADCAST_TOTAL_SHARDS items (the shard a hash of the email id), summed at read, so its emails'
 * events (up to the account's SES rate, thousands a second) never crowd one item; its recipients of
 * each type are spread over BROADCAST_RECIPIENT_SHARDS partitions by a hash of the address (an
 * `email` filter reads one), each sorted by address, merged at read.
 */
export const BROADCAST_TOTAL_SHARDS = 8;
export const BROADCAST_RECIPIENT_SHARDS = 16;
/** What separates the domain from the broadcast in a metrics counter's sk (keys.metricsHourSk). */
export const METRICS_BROADCAST_MARK = '#B#';

/** How long webhook messages and their attempts are kept (Resend keeps event data 30 days). */
export const WEBHOOK_MESSAGE_RETENTION_DAYS = 30;

/**
 * The index of scheduled emails by due time: a scheduled email's status item is in it from when it
 * is accepted until it is sent or final (then its keys are removed in the same write), so the
 * scheduler finds what falls due with one Query, and what it must still watch (see schedule.ts).
 * Sparse and keys only: every other email, and every other item, is absent from it.
 */
export const DUE_INDEX = { name: 'emails-by-due', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' } as const;

/** The search index (email-keys.ts, "Search"): its own key attributes, so no other item is in it. */
export const SEARCH_INDEX = { name: 'emails-by-search', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' } as const;

export const INDEXES = {
  /**
   * Keys only: the listing reads the status items anyway, and an index that copied `status` took a
   * write at every status change. It replaced `emails-by-time` (LEGACY_INDEXES), on the same key
   * attributes, so DynamoDB filled it from the items already there (docs/operations.md, "Upgrading").
   */
  emailsByTime: { name: 'emails-by-time-keys', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  emailsByStatus: { name: 'emails-by-status', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  emailsByDue: DUE_INDEX,
  /**
   * Keys only, overloaded: an email's recipients (To, Cc and Bcc, lower-cased), its sender's domain
   * and its tags, each under partitions of its own sharded by a hash of the email id, sorted by id
   * (email-keys.ts, "Search"). Written once at acceptance, never updated, expiring with the email.
   */
  emailsBySearch: SEARCH_INDEX,
} as const satisfies Record<IndexKey, { name: string; partitionKey: string; sortKey: string }>;

/** The index the keys-only time index replaced; a table upgraded in steps has both for a while. */
export const LEGACY_INDEXES = {
  emailsByTime: { name: 'emails-by-time', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
} as const;

/** Non-key attributes copied into the status index (and the legacy time index). */
export const INDEX_PROJECTION = ['status', 'created_at'] as const;

/** What an index copies: the status index (and the legacy time index) INDEX_PROJECTION, the others keys only. */
export const projectionOf = (
  name: string,
): { ProjectionType: 'KEYS_ONLY' } | { ProjectionType: 'INCLUDE'; NonKeyAttributes: string[] } =>
  name === INDEXES.emailsByStatus.name || name === LEGACY_INDEXES.emailsByTime.name
    ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...INDEX_PROJECTION] }
    : { ProjectionType: 'KEYS_ONLY' };

export const keys = {
  email: (id: string) => `EMAIL#${id}`,
  idOf: (pk: string) => pk.slice('EMAIL#'.length),
  status: 'STATUS',
  summary: 'SUMMARY',
  body: 'BODY',
  event: (at: string, type: string, digest: string) => `EVENT#${at}#${type}#${digest}`,
  eventPrefix: 'EVENT#',
  /** A shard's name in an index partition (email-keys.ts). */
  shard: (n: number) => String(n).padStart(2, '0'),
  allEmails: 'EMAILS',
  emailsWithStatus: (status: string) => `EMAILS#${status}`,
  apiKey: (hash: string) => `APIKEY#${hash}`,
  /** A key's rate shard k ≥ 1 (shard 0 is its lookup item; see api-key-repository.ts). */
  apiKeyShard: (hash: string, shard: number) => `APIKEY#${hash}#${shard}`,
  apiKeySk: 'APIKEY',
  domains: 'DOMAINS',
  domain: (id: string) => `DOMAIN#${id}`,
  domainPrefix: 'DOMAIN#',
  domainName: (name: string) => `DOMAINNAME#${name}`,
  domainNameSk: 'DOMAINNAME',
  templates: 'TEMPLATES',
  template: (id: string) => `TEMPLATE#${id}`,
  templatePrefix: 'TEMPLATE#',
  /** The published version of a template: its own partition, read by the send path. */
  publishedTemplate: (id: string) => `TEMPLATE#${id}`,
  publishedTemplateSk: 'PUBLISHED',
  templateAlias: (alias: string) => `TEMPLATEALIAS#${alias.toLowerCase()}`,
  templateAliasSk: 'TEMPLATEALIAS',
  /** Deleted domains' configuration sets, kept until SES has reported their emails' last events. */
  retiredSets: 'RETIREDSETS',
  retiredSet: (name: string) => `SET#${name}`,
  apiKeys: 'APIKEYS',
  apiKeyListing: (id: string) => `APIKEY#${id}`,
  apiKeyListingPrefix: 'APIKEY#',
  idempotency: (scope: string, keyHash: string) => `IDEMP#${scope}#${keyHash}`,
  idempotencySk: 'IDEMP',
  share: (hash: string) => `SHARE#${hash}`,
  shareSk: 'SHARE',
  suppression: (email: string) => `SUPPRESSION#${email}`,
  suppressionSk: 'SUPPRESSION',
  suppressions: 'SUPPRESSIONS',
  suppressionsWithOrigin: (origin: string) => `SUPPRESSIONS#${origin}`,
  webhooks: 'WEBHOOKS',
  webhook: (id: string) => `WEBHOOK#${id}`,
  /** One shard of an endpoint's messages (`webhook(id)` alone: the unsharded partition of earlier versions). */
  webhookShard: (id: string, shard: string) => `WEBHOOK#${id}#${shard}`,
  webhookPrefix: 'WEBHOOK#',
  webhookMessage: (messageId: string) => `MSG#${messageId}`,
  webhookMessagePrefix: 'MSG#',
  webhookAttempt: (messageId: string, attemptId: string) => `ATTEMPT#${messageId}#${attemptId}`,
  webhookAttemptPrefix: (messageId: string) => `ATTEMPT#${messageId}#`,
  /** Scheduled emails in the due index, sorted by due time (ISO UTC, which sorts as text). */
  due: 'DUE',
  dueSk: (scheduledAt: string, id: string) => `${scheduledAt}#${id}`,
  idOfDueSk: (sk: string) => sk.slice(sk.indexOf('#') + 1),
  /** A parked webhook retry: its shard's partition, and its due time (ISO UTC, which sorts as text) first. */
  webhookRetry: (shard: number) => `WHRETRY#${shard}`,
  webhookRetrySk: (dueAt: string, messageId: string) => `${dueAt}#${messageId}`,
  /** What sorts after every retry due at `until`: `$` follows the `#` after the time. */
  webhookRetryDueBound: (until: string) => `${until}$`,
  messageIdOfRetrySk: (sk: string) => sk.slice(sk.indexOf('#') + 1),
  /** A message held by its endpoint's open breaker: the endpoint's shard, its event's time first. */
  webhookHeld: (webhookId: string, shard: number) => `WHHELD#${webhookId}#${shard}`,
  /** Each hold its own item (`holdId`): a message held again after its release is not the one the release takes out. */
  webhookHeldSk: (createdAt: string, messageId: string, holdId?: string) =>
    holdId ? `${createdAt}#${messageId}#${holdId}` : `${createdAt}#${messageId}`,
  /** An event kept to be published late: its shard's partition, its time (ISO UTC) first. */
  unpublishedEvent: (shard: number) => `WHUNPUB#${shard}`,
  unpublishedEventSk: (createdAt: string, eventKey: string) => `${createdAt}#${eventKey}`,
  /** The sweeper's progress through the queued emails (see emails/sweep.ts). */
  sweep: 'SWEEP',
  /** The scheduler's progress through each partition of the due index (see emails/scheduler.ts). */
  schedule: 'SCHEDULE',
  scheduleShard: (partition: string) => `SHARD#${partition}`,
  sendPace: 'SENDPACE',
  /** Beside the schedule, in its partition: the account's SES limits, as one instance read them for all. */
  sendPaceAccount: 'SES_ACCOUNT',
  /** A request log: its own partition (so writes spread), listed through the two listing indexes. */
  log: (id: string) => `LOG#${id}`,
  logSk: 'LOG',
  /** A log's sort key in the listing indexes: its id (a UUIDv7, which sorts by time). */
  logListed: (id: string) => `LOG#${id}`,
  logListedPrefix: 'LOG#',
  logs: (shard: number) => `LOGS#${String(shard).padStart(2, '0')}`,
  logsWithStatus: (statusClass: string, shard: number) =>
    `LOGS#${statusClass}#${String(shard).padStart(2, '0')}`,
  /** Received emails: one partition, sorted by id (a UUIDv7; adapters/dynamodb/received-emails.ts). */
  received: 'RECEIVED',
  /** The claim of an SES message id by the received email stored for it. */
  receivedMessage: (sesMessageId: string) => `RECEIVEDMSG#${sesMessageId}`,
  receivedMessageSk: 'RECEIVEDMSG',
  /** A contact: keyed by its address, lower-cased (audience-items.ts). */
  contact: (address: string) => `CONTACT#${address.toLowerCase()}`,
  contactSk: 'CONTACT',
  /** The contacts' listing partitions (the time index), CONTACT_SHARDS of them. */
  contacts: (shard: number) => `CONTACTS#${String(shard).padStart(2, '0')}`,
  contactId: (id: string) => `CONTACTID#${id}`,
  contactIdSk: 'CONTACTID',
  /** A contact's memberships and topic choices: the partition of its id. */
  contactOf: (contactId: string) => `CONTACTOF#${contactId}`,
  membershipSk: (segmentId: string) => `SEGMENT#${segmentId}`,
  membershipPrefix: 'SEGMENT#',
  choiceSk: (topicId: string) => `TOPIC#${topicId}`,
  choicePrefix: 'TOPIC#',
  /** A segment's members in the time index (one shard of them), sorted by contact id. */
  segmentMembers: (segmentId: string, shard: number) =>
    `SEGMENT#${segmentId}#${String(shard).padStart(2, '0')}`,
  /** A topic's choices in the status index (one shard of them), sorted by contact id. */
  topicChoices: (topicId: string, shard: number) => `TOPIC#${topicId}#${String(shard).padStart(2, '0')}`,
  segments: 'SEGMENTS',
  segment: (id: string) => `SEGMENT#${id}`,
  topics: 'TOPICS',
  topic: (id: string) => `TOPIC#${id}`,
  contactProperties: 'CONTACTPROPS',
  contactProperty: (id: string) => `PROP#${id}`,
  contactPropertyKey: (key: string) => `CONTACTPROPKEY#${key}`,
  contactPropertyKeySk: 'CONTACTPROPKEY',
  imports: 'IMPORTS',
  contactImport: (id: string) => `IMPORT#${id}`,
  broadcasts: 'BROADCASTS',
  broadcast: (id: string) => `BROADCAST#${id}`,
  /** The partition of one broadcast's clicked links (sk broadcastLinkSk). */
  broadcastOf: (id: string) => `BROADCAST#${id}`,
  /**
   * One shard of a broadcast's totals, a partition of its own (sk broadcastTotalsSk): the shard in
   * the partition key, so the broadcast's counting spreads over BROADCAST_TOTAL_SHARDS partitions
   * (each takes 1,000 writes a second; one partition would cap a broadcast's events at that).
   */
  broadcastTotals: (id: string, shard: number) => `BROADCAST#${id}#TOTALS#${String(shard).padStart(2, '0')}`,
  broadcastTotalsSk: 'TOTALS',
  broadcastLinkSk: (urlDigest: string) => `LINK#${urlDigest}`,
  /** One shard of a broadcast's recipients of one type; sk `<address>#<email id>`. */
  broadcastRecipients: (id: string, type: string, shard: number) =>
    `BRECIPIENTS#${id}#${type}#${String(shard).padStart(2, '0')}`,
  /** A recipient's first click on each link (sk broadcastLinkSk): what unique clicks count. */
  broadcastClicks: (id: string, emailId: string) => `BCLICK#${id}#${emailId}`,
  /** Local runtime only: which key `npm start` issued last, so a restart revokes it. */
  localDevKey: 'LOCAL#DEV_API_KEY',
  /**
   * One shard of the email metrics' counters of one UTC hour (`2026-07-01T13`); sk metricsHourSk:
   * the domain, or for a broadcast's email the domain and the broadcast.
   */
  metricsHour: (hour: string, shard: number) => `METRICS#HOUR#${hour}#${String(shard).padStart(2, '0')}`,
  /** `<domain>`, or `<domain>#B#<broadcast id>` (a domain is lowercase: it never holds `#B#`). */
  metricsHourSk: (domain: string, broadcastId?: string) =>
    broadcastId ? `${domain}${METRICS_BROADCAST_MARK}${broadcastId}` : domain,
  /**
   * A month's days of the broadcasts' metrics, rolled up, in one of the month's partitions (the
   * broadcast's, by a hash of its id); sk metricsBroadcastDaySk: `<broadcast id>#<day>#<domain>`,
   * so a broadcast's days are one range of one partition.
   */
  metricsBroadcastDays: (month: string, partition: number) =>
    `METRICS#BDAYS#${month}#${String(partition).padStart(2, '0')}`,
  metricsBroadcastDaySk: (broadcastId: string, day: string, domain: string) =>
    `${broadcastId}#${day}#${domain}`,
  /**
   * The email metrics of one month's days, rolled up, in one of the month's partitions (the
   * domain's, by a hash of its name: an hour's roll-up of thousands of domains is not one hot
   * partition); sk: `<day>#<domain>`.
   */
  metricsDays: (month: string, partition: number) =>
    `METRICS#DAYS#${month}#${String(partition).padStart(2, '0')}`,
  metricsDaySk: (day: string, domain: string) => `${day}#${domain}`,
  /** How far the roll-up has come (sk `ROLLED`). */
  metrics: 'METRICS',
  metricsRolledSk: 'ROLLED',
} as const;
