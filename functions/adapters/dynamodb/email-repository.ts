import { createHash, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { StoredAttachment } from '../../core/attachments.js';
import type { EmailContent, EmailDetail, EmailEvent, EmailSummary } from '../../core/email.js';
import { FIRST_EMAIL_ID } from '../../core/ids.js';
import type { ListEmailsQuery } from '../../core/list.js';
import {
  type ClaimResult,
  type EmailRepository,
  type EmailState,
  type FinishOptions,
  type NewEmail,
  type RecipientNews,
  type SuppressedRecipients,
  suppressedPositions,
} from '../../core/ports.js';
import {
  positionsOf,
  recipientOutcomes,
  recipientsOf,
  type SuppressedReason,
} from '../../core/recipients.js';
import {
  type EmailStatus,
  lastEventOf,
  type RecipientTally,
  settledStatus,
  type TerminalStatus,
} from '../../core/status.js';
import { batchGetAll, isConditionFailure, newestFirstMerged, pause, queryPages } from './client.js';
import { EmailKeys, type TableLayout } from './email-keys.js';
import { DUE_INDEX, INDEXES, keys } from './table.js';

type Item = Record<string, unknown>;

/** Emails in the single table. Status, summary and bodies are separate items (see table.ts). */
export class DynamoEmailRepository implements EmailRepository {
  private readonly deflate: boolean;
  private readonly keys: EmailKeys;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: { deflateBodies?: boolean; layout?: TableLayout } = {},
  ) {
    this.deflate = options.deflateBodies ?? true;
    this.keys = new EmailKeys(options.layout);
  }

  getContent(id: string): Promise<EmailContent | null> {
    return readContent(this.db, this.tableName, id);
  }

  async getAttachments(id: string): Promise<StoredAttachment[] | null> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.body },
        ProjectionExpression: 'pk, attachments',
        ConsistentRead: true,
      }),
    );
    if (!Item) return null;
    return (Item.attachments as StoredAttachment[] | undefined) ?? [];
  }

  async create(email: NewEmail): Promise<void> {
    // Summary and bodies first, the status item last: an email shows up (in lists, to the
    // consumer) only once all of it is stored; a failure in between leaves nothing visible.
    await this.batchWrite(this.contentItems(email));
    if (!(await this.putStatus(this.statusItem(email))))
      throw new Error(`An email ${email.id} exists already`);
  }

  /** An email's summary and body items (immutable), expiring with it. */
  private contentItems({ id, created_at, content, schedule }: NewEmail): Item[] {
    const pk = keys.email(id);
    const { html, text, tags, headers, attachments, body_key, ...summary } = content;
    const expiry = this.keys.expiry(created_at, schedule?.at);
    return [
      { pk, sk: keys.summary, ...summary, ...expiry },
      {
        pk,
        sk: keys.body,
        ...storedBodies(html, text, this.deflate),
        ...extras({ tags, headers, attachments, body_key }),
        ...expiry,
      },
    ];
  }

  /**
   * A new email's status item: queued, in both listing indexes, with how many recipients it has; a
   * scheduled one also in the due index, with the key that scheduled it and, when the send path
   * queues it itself (it is due soon), its time as the one already dispatched.
   */
  private statusItem({ id, created_at, content, schedule }: NewEmail): Item {
    return {
      pk: keys.email(id),
      sk: keys.status,
      status: 'queued',
      created_at,
      rcpts: recipientsOf(content).length,
      ...this.keys.created(id, schedule?.at),
      ...this.keys.expiry(created_at, schedule?.at),
      ...(schedule
        ? {
            scheduled_at: schedule.at,
            key_id: schedule.key_id,
            ...(schedule.dispatched ? { dispatched: schedule.at } : {}),
          }
        : {}),
    };
  }

  /**
   * Puts a new email's status item, never over an existing one; false when one exists that this
   * write did not make. (The SDK retries a write whose answer was lost; the retry then finds the
   * item its first try wrote: ids are unique, so an item with this id and creation time is its own.)
   */
  private async putStatus(item: Item): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await this.getState(keys.idOf(String(item.pk))))?.created_at === item.created_at;
    }
  }

  async createMany(
    emails: NewEmail[],
    options: { mayExist?: boolean } = {},
  ): Promise<{ existing: string[] }> {
    const parts = emails.flatMap((email) => this.contentItems(email));
    // The immutable parts 25 items a call (DynamoDB's limit), the calls side by side. Written again
    // for an email that exists, they are the same content (the same request, resumed).
    const inChunks = (items: Item[]) => {
      const chunks: Item[][] = [];
      for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
      return Promise.all(chunks.map((chunk) => this.batchWrite(chunk)));
    };
    await inChunks(parts);
    if (!options.mayExist) {
      // Fresh ids: no status item exists, so batch writes (which cannot be conditional) are safe.
      await inChunks(emails.map((email) => this.statusItem(email)));
      return { existing: [] };
    }
    // Ids a request that died may have used: each status item conditional, never over an email
    // that exists (its status and attempt record would be reset). The same write units.
    const written = await Promise.all(emails.map((email) => this.putStatus(this.statusItem(email))));
    return { existing: emails.filter((_, i) => !written[i]).map(({ id }) => id) };
  }

  async states(ids: string[]): Promise<EmailState[]> {
    return readStates(this.db, this.tableName, ids);
  }

  async get(id: string): Promise<EmailDetail | null> {
    const items: Item[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      // Strongly consistent: GET right after the POST that stored it finds it (an eventually
      // consistent read may not reflect a write just made; the local DynamoDB always does).
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.email(id) },
    }))
      items.push(...page);

    const bySk = (sk: string) => items.find((item) => item.sk === sk);
    const status = bySk(keys.status);
    const summary = bySk(keys.summary);
    if (!status || !summary) return null;
    const body = bySk(keys.body) ?? {};
    const toEvent = (item: Item): EmailEvent => ({
      type: String(item.type),
      at: String(item.at),
      recipients: (item.recipients as string[] | undefined) ?? [],
      ...(item.detail ? { detail: String(item.detail) } : {}),
      ...(item.bounce ? { bounce: item.bounce as EmailEvent['bounce'] & object } : {}),
    });
    const events = items.filter((item) => String(item.sk).startsWith(keys.eventPrefix)).map(toEvent);
    // The event a one-recipient email was settled by, kept on its status item; in time order, and
    // once (the same event delivered again later is an item of its own).
    const inlineEvent = status[INLINE_EVENT] ? toEvent(status[INLINE_EVENT] as Item) : undefined;
    if (inlineEvent && !events.some((e) => eventKey(e) === eventKey(inlineEvent))) {
      const at = events.findIndex((e) => e.at > inlineEvent.at);
      events.splice(at < 0 ? events.length : at, 0, inlineEvent);
    }
    const emailSummary = toSummary(id, status, summary);
    return {
      ...emailSummary,
      ...bodiesOf(body),
      ...extrasOf(body),
      sent_at: (status.sent_at as string | undefined) ?? null,
      failure_reason: (status.failure_reason as string | undefined) ?? null,
      recipients: recipientOutcomes(recipientsOf(emailSummary), events, {
        status: emailSummary.status,
        sentAt: (status.sent_at as string | undefined) ?? null,
        suppressed: suppressedOf(status),
        suppressedAt: (status.suppressed_at as string | undefined) ?? null,
      }),
      events,
    };
  }

  async list(query: ListEmailsQuery): Promise<{ data: EmailSummary[]; has_more: boolean }> {
    const { status } = query;
    const index = status ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    // The index's sort key is the id, and ids sort by creation time: its shards merge into one list.
    const { items: page, has_more } = await newestFirstMerged(
      this.db,
      {
        TableName: this.tableName,
        IndexName: status ? index.name : this.keys.layout.timeIndex,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partitions: status ? this.keys.statusPartitions(status) : this.keys.timePartitions(),
        prefix: FIRST_EMAIL_ID,
        sortKeyOf: (id) => id,
      },
      query,
    );
    if (page.length === 0) return { data: [], has_more };

    // The summaries and the status items (what last_event and message_id come from), 100 keys a call.
    const wanted = page.flatMap((entry) => [
      { pk: entry.pk, sk: keys.summary },
      { pk: entry.pk, sk: keys.status },
    ]);
    const chunks: Item[][] = [];
    for (let i = 0; i < wanted.length; i += 100) chunks.push(wanted.slice(i, i + 100));
    const found = (
      await Promise.all(chunks.map((chunk) => batchGetAll(this.db, this.tableName, chunk)))
    ).flat();
    // An item the eventually consistent read did not see yet (the email was just stored, or has
    // just expired) is read again, strongly consistent: rare, and the page stays exact.
    const missed = wanted.filter((key) => !found.some((item) => item.pk === key.pk && item.sk === key.sk));
    if (missed.length) found.push(...(await batchGetAll(this.db, this.tableName, missed, undefined, true)));
    const bySk = (sk: string) =>
      new Map(found.filter((item) => item.sk === sk).map((item) => [item.pk, item]));
    const summaries = bySk(keys.summary);
    const states = bySk(keys.status);
    const data: EmailSummary[] = [];
    for (const entry of page) {
      const summary = summaries.get(entry.pk);
      const state = states.get(entry.pk);
      // Both gone: the email expired between the index read and this one.
      if (summary && state) data.push(toSummary(keys.idOf(String(entry.pk)), state, summary));
    }
    return { data, has_more };
  }

  async getState(id: string): Promise<EmailState | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.statusKey(id), ConsistentRead: true }),
    );
    return Item ? toState(id, Item) : null;
  }

  async claim(id: string, nowMs: number, suppressed?: SuppressedRecipients): Promise<ClaimResult> {
    const marks = suppressedMarks(suppressed);
    // This claim's own mark. If DynamoDB applies the write but its answer is lost, the SDK's retry
    // finds the email claimed; the mark tells that claim is this one, so the email is still sent.
    const token = randomBytes(9).toString('base64url');
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // The recipients left out are settled in the same write: the claim and they stand together.
          UpdateExpression: `SET send_started_at = :now, claim = :token${marks.set}${marks.add}`,
          // No expiry: once an attempt began, no other is ever started (see deliver-email.ts).
          // A scheduled email only once it is due: a reschedule or cancel and this claim are
          // conditional writes on the same item, so exactly one of them happens.
          ConditionExpression:
            'attribute_exists(pk) AND #status = :queued AND attribute_not_exists(sent_at) AND ' +
            `attribute_not_exists(send_started_at) AND ${DUE}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':now': nowMs,
            ':token': token,
            ':nowIso': new Date(nowMs).toISOString(),
            ...marks.values,
          },
        }),
      );
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // Rare path (a duplicate message, or a retry after a lost answer): read why it was refused.
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.statusKey(id), ConsistentRead: true }),
    );
    if (Item?.claim === token) return 'claimed';
    const state = Item ? toState(id, Item) : null;
    if (!state) return 'missing';
    if (state.status !== 'queued' || state.sent_at) return 'done';
    if (state.send_started_at !== undefined) return 'in_progress';
    if (state.scheduled_at && Date.parse(state.scheduled_at) > nowMs) return 'not_due';
    return 'in_progress';
  }

  async release(id: string, startedAtMs: number, nowMs: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // When it was refused: its message is retried from then on, so the sweeper waits from then.
          UpdateExpression: 'SET refused_at = :now REMOVE send_started_at, claim, attempt_error',
          // Only this worker's own attempt, and only while nothing says it was sent.
          ConditionExpression: 'send_started_at = :mine AND attribute_not_exists(sent_at)',
          ExpressionAttributeValues: { ':mine': startedAtMs, ':now': nowMs },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async markDeferred(id: string, nowMs: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // The sweeper waits from the last refusal before it takes an unsent email for stranded.
          UpdateExpression: 'SET refused_at = :now',
          ConditionExpression:
            '#status = :queued AND attribute_not_exists(send_started_at) AND attribute_not_exists(sent_at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':now': nowMs, ':queued': 'queued' },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async markSent(
    id: string,
    providerMessageId: string,
    at: string,
    mark?: 'delayed' | 'complained',
  ): Promise<boolean> {
    // In the same write: a delay or complaint costs nothing more than recording the email as sent.
    // A flag, not a time: last_event needs only whether it happened, and the status item stays small.
    const marked = mark ? `, ${mark} = :true` : '';
    const { Attributes } = await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.statusKey(id),
        // The consumer and the provider's Send event both record it; the first record stands.
        UpdateExpression:
          'SET sent_at = if_not_exists(sent_at, :at), provider_message_id = if_not_exists(provider_message_id, :mid)' +
          `${marked} REMOVE attempt_error, claim, ${DUE_KEYS}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: {
          ':at': at,
          ':mid': providerMessageId,
          ...(mark ? { ':true': true } : {}),
        },
        // The old sent_at comes back only if there was one: absent, this write recorded it first.
        ReturnValues: 'UPDATED_OLD',
      }),
    );
    // Present and this write's own: an SDK retry after a first try whose answer was lost.
    return (
      Attributes?.sent_at === undefined ||
      (Attributes.sent_at === at && Attributes.provider_message_id === providerMessageId)
    );
  }

  async markUnknown(id: string, reason: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          UpdateExpression: 'SET attempt_error = :reason',
          ConditionExpression: 'attribute_exists(send_started_at) AND attribute_not_exists(sent_at)',
          ExpressionAttributeValues: { ':reason': bounded(reason) },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async finish(
    id: string,
    status: TerminalStatus,
    at: string,
    options: FinishOptions = {},
  ): Promise<boolean> {
    const { reason, guard, sent, suppressed, canceled } = options;
    const set = [
      '#status = :status',
      `${INDEXES.emailsByStatus.partitionKey} = :gsi2pk`,
      'finished_at = :at',
    ];
    if (canceled) set.push('canceled = :true');
    const marks = suppressedMarks(suppressed);
    const values: Item = {
      ':status': status,
      ':gsi2pk': this.keys.withStatus(id, status),
      ':at': at,
      ':queued': 'queued',
      ...(canceled ? { ':true': true } : {}),
      ...marks.values,
    };
    if (reason) {
      set.push('failure_reason = :reason');
      // Bounded so the status item stays small (one write unit per status change).
      values[':reason'] = bounded(reason);
    }
    if (sent) {
      set.push(
        'sent_at = if_not_exists(sent_at, :sentAt)',
        'provider_message_id = if_not_exists(provider_message_id, :mid)',
      );
      values[':sentAt'] = sent.at;
      values[':mid'] = sent.providerMessageId;
    }
    // Forward only: a late or repeated event finds the email already final and changes nothing.
    const conditions = ['#status = :queued'];
    if (guard && 'unsent' in guard) {
      // Never before a scheduled email is due (it is not the consumer's to settle until then).
      conditions.push('attribute_not_exists(sent_at)', 'attribute_not_exists(send_started_at)', DUE);
      values[':nowIso'] = at;
    }
    if (guard && 'scheduled' in guard)
      conditions.push(
        'attribute_exists(scheduled_at)',
        'attribute_not_exists(sent_at)',
        'attribute_not_exists(send_started_at)',
      );
    if (guard && 'attemptStartedAt' in guard) {
      conditions.push('send_started_at = :started', 'attribute_not_exists(sent_at)');
      values[':started'] = guard.attemptStartedAt;
    }
    if (guard && 'sent' in guard) conditions.push('attribute_exists(sent_at)');
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // A final email leaves the due index in the same write.
          UpdateExpression: `SET ${set.join(', ')}${marks.set}${marks.add} REMOVE ${DUE_KEYS}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async addEvent(id: string, event: EmailEvent): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        // Derived from the whole event: a redelivered event overwrites itself, while two events of
        // one type in the same millisecond (for different recipients) are two items.
        Item: { pk: keys.email(id), sk: eventKey(event), ...event, ...this.keys.eventExpiry(event.at) },
      }),
    );
  }

  async settleRecipients(
    id: string,
    news: RecipientNews,
  ): Promise<{ status: EmailStatus; tally: RecipientTally; changed: boolean } | null> {
    const lost = news.outcome === 'bounced';
    const flags = { [news.outcome === 'complained' ? 'complained' : news.outcome]: true } as Item;
    if (news.outcome === 'complained') flags.delivered = true;
    // The common case first: a queued email with one recipient is settled by this news alone, in
    // one write, its event kept on the status item (a small one: an item of its own otherwise,
    // written first, so the email never shows an outcome without its event). The condition fails
    // for anything else (several recipients, already final, an email stored before recipients were
    // counted), which takes the general path.
    const inline = Buffer.byteLength(JSON.stringify(news.event)) <= INLINE_EVENT_MAX_BYTES;
    if (!inline) await this.addEvent(id, news.event);
    const single = settledStatus({ total: 1, done: 1, lost: lost ? 1 : 0 }) as TerminalStatus;
    const settled = await this.update(
      id,
      {
        set: {
          ...flags,
          '#status': single,
          [INDEXES.emailsByStatus.partitionKey]: this.keys.withStatus(id, single),
          finished_at: news.at,
          ...(lost && news.reason ? { failure_reason: bounded(news.reason) } : {}),
          ...(inline ? { [INLINE_EVENT]: news.event } : {}),
        },
        add: { done: [0], ...(lost ? { lost: [0] } : {}) },
        sent: news.sent,
      },
      'rcpts = :one AND #status = :queued',
      { ':one': 1, ':queued': 'queued' },
    );
    if (settled) return { status: single, tally: tallyOf(settled), changed: true };
    if (inline) await this.addEvent(id, news.event);

    // The general path: which positions the news concerns, from the email's recipients (immutable).
    const { Item: summary } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.summary },
        ProjectionExpression: '#to, cc, bcc',
        ExpressionAttributeNames: { '#to': 'to' },
      }),
    );
    if (!summary) return null;
    const recipients = recipientsOf({
      to: (summary.to as string[] | undefined) ?? [],
      cc: (summary.cc as string[] | undefined) ?? [],
      bcc: (summary.bcc as string[] | undefined) ?? [],
    });
    const positions = positionsOf(recipients, news.addresses);
    const after = await this.update(
      id,
      {
        set: { ...flags, rcpts: ['if_not_exists', recipients.length] },
        add: positions.length ? { done: positions, ...(lost ? { lost: positions } : {}) } : {},
        sent: news.sent,
      },
      'attribute_exists(pk)',
      {},
    );
    if (!after) return null;
    return { status: after.status as EmailStatus, tally: tallyOf(after), changed: false };
  }

  /**
   * One UpdateItem of the status item: `set` values (a `['if_not_exists', v]` keeps what is there),
   * `add` positions to number sets, `sent` filled in if absent; the item after it, or null when the
   * condition did not hold.
   */
  private async update(
    id: string,
    change: { set: Item; add: Record<string, number[]>; sent?: { at: string; providerMessageId: string } },
    condition: string,
    conditionValues: Item,
  ): Promise<Item | null> {
    const names: Record<string, string> = {};
    const values: Item = { ...conditionValues };
    const set: string[] = [];
    let n = 0;
    for (const [name, value] of Object.entries(change.set)) {
      const attr = name.startsWith('#') ? name : `#a${n}`;
      names[attr] = name.startsWith('#') ? name.slice(1) : name;
      const v = `:v${n++}`;
      if (Array.isArray(value) && value[0] === 'if_not_exists') {
        set.push(`${attr} = if_not_exists(${attr}, ${v})`);
        values[v] = value[1];
      } else {
        set.push(`${attr} = ${v}`);
        values[v] = value;
      }
    }
    if (change.sent) {
      set.push(
        'sent_at = if_not_exists(sent_at, :sentAt)',
        'provider_message_id = if_not_exists(provider_message_id, :mid)',
      );
      values[':sentAt'] = change.sent.at;
      values[':mid'] = change.sent.providerMessageId;
    }
    const add = Object.entries(change.add).map(([name, positions]) => {
      values[`:${name}`] = new Set(positions);
      return `${name} :${name}`;
    });
    if (condition.includes('#status')) names['#status'] = 'status';
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // Sent or final: out of the due index (removing absent keys costs nothing).
          UpdateExpression: `SET ${set.join(', ')}${add.length ? ` ADD ${add.join(', ')}` : ''} REMOVE ${DUE_KEYS}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ?? null;
    } catch (error) {
      if (isConditionFailure(error)) return null;
      throw error;
    }
  }

  async reschedule(id: string, scheduledAt: string, dispatched: boolean): Promise<boolean> {
    // A new time is never before the email was created, so it alone sets the expiry.
    const expiry = this.keys.expiry(scheduledAt, scheduledAt);
    const [ttl] = Object.entries(expiry);
    const due = Object.entries(this.keys.due(id, scheduledAt));
    // Its content's expiry beside it: the email outlives its new time, all of it (a later expiry
    // is harmless should the reschedule itself be refused).
    const content = ttl ? this.extendContent(id, ttl[0], ttl[1]) : Promise.resolve();
    try {
      await Promise.all([
        content,
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: this.statusKey(id),
            UpdateExpression: `SET scheduled_at = :at, ${due.map(([name]) => `${name} = :${name}`).join(', ')}${
              ttl ? ', #ttl = :ttl' : ''
            }${dispatched ? ', dispatched = :at' : ''}${dispatched ? '' : ' REMOVE dispatched'}`,
            // Only while it waits: not yet claimed by the consumer, not sent, not final (canceled).
            ConditionExpression:
              '#status = :queued AND attribute_exists(scheduled_at) AND attribute_not_exists(sent_at) AND ' +
              'attribute_not_exists(send_started_at)',
            ExpressionAttributeNames: { '#status': 'status', ...(ttl ? { '#ttl': ttl[0] } : {}) },
            ExpressionAttributeValues: {
              ':queued': 'queued',
              ':at': scheduledAt,
              ...Object.fromEntries(due.map(([name, value]) => [`:${name}`, value])),
              ...(ttl ? { ':ttl': ttl[1] } : {}),
            },
          }),
        ),
      ]);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Sets the expiry of an email's summary and body items (absent ones are left absent). */
  private async extendContent(id: string, attribute: string, value: unknown): Promise<void> {
    await Promise.all(
      [keys.summary, keys.body].map((sk) =>
        this.db
          .send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { pk: keys.email(id), sk },
              UpdateExpression: 'SET #ttl = :ttl',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#ttl': attribute },
              ExpressionAttributeValues: { ':ttl': value },
            }),
          )
          .catch((error) => {
            if (!isConditionFailure(error)) throw error;
          }),
      ),
    );
  }

  private statusKey(id: string) {
    return { pk: keys.email(id), sk: keys.status };
  }

  private async batchWrite(items: Item[]): Promise<void> {
    let requests = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 5) throw new Error('DynamoDB did not accept the write after 5 retries');
        await pause(25 * 2 ** attempt);
      }
      const result = await this.db.send(
        new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
      );
      requests = (result.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
    }
  }
}

/**
 * Suppressed recipients settled in a claim or a final change: counted as done and lost, and kept
 * by reason (number sets of positions, so a repeat counts once), with when, and the mark
 * `last_event` reads. The status item holds all of it: a recipient's own status needs no other item.
 */
function suppressedMarks(suppressed?: SuppressedRecipients) {
  const all = suppressed ? suppressedPositions(suppressed) : [];
  if (!suppressed || all.length === 0) return { set: '', add: '', values: {} };
  const values: Item = { ':supTrue': true, ':supAt': suppressed.at, ':supAll': new Set(all) };
  const add = ['done :supAll', 'lost :supAll'];
  for (const [reason, positions] of Object.entries(suppressed.byReason)) {
    if (!positions?.length) continue;
    const attr = SUPPRESSED_SETS[reason as SuppressedReason];
    values[`:${attr}`] = new Set(positions);
    add.push(`${attr} :${attr}`);
  }
  return {
    set: ', suppressed = :supTrue, suppressed_at = if_not_exists(suppressed_at, :supAt)',
    add: ` ADD ${add.join(', ')}`,
    values,
  };
}

/** The status item's set of suppressed positions for each reason. */
const SUPPRESSED_SETS: Record<SuppressedReason, string> = {
  previous_bounce: 'sup_bounce',
  previous_complaint: 'sup_complaint',
  manual: 'sup_manual',
};

/** Which positions were left out as suppressed, and why, from the status item. */
function suppressedOf(item: Item): Map<number, SuppressedReason> {
  const found = new Map<number, SuppressedReason>();
  for (const [reason, attr] of Object.entries(SUPPRESSED_SETS))
    if (item[attr] instanceof Set)
      for (const position of item[attr] as Set<number>)
        found.set(Number(position), reason as SuppressedReason);
  return found;
}

/** What the status item counts of the recipients (an email stored before counting had no `rcpts`). */
export function tallyOf(item: Item): RecipientTally {
  const size = (value: unknown) => (value instanceof Set ? value.size : 0);
  return {
    total: typeof item.rcpts === 'number' ? item.rcpts : 0,
    done: size(item.done),
    lost: size(item.lost),
  };
}

/**
 * Bodies of more than this many bytes are kept deflated in the body item (attribute `z`, binary):
 * an email's HTML shrinks three to ten times, and the item's write units with it (one per KB).
 */
export const DEFLATE_BODIES_OVER_BYTES = 1024;

/**
 * The body item's attributes for these bodies: as they are, or (with `deflate`) deflated together
 * when that is smaller.
 */
export function storedBodies(html: string | null, text: string | null, deflate = true): Item {
  const plain = { html, text };
  if (!deflate || Buffer.byteLength(html ?? '') + Buffer.byteLength(text ?? '') <= DEFLATE_BODIES_OVER_BYTES)
    return plain;
  const z = deflateRawSync(JSON.stringify(plain));
  return z.byteLength < Buffer.byteLength(html ?? '') + Buffer.byteLength(text ?? '') ? { z } : plain;
}

/** The bodies of a body item, deflated or not (items stored before bodies were deflated have none). */
export function bodiesOf(item: Item): { html: string | null; text: string | null } {
  if (item.z instanceof Uint8Array) {
    const { html, text } = JSON.parse(inflateRawSync(item.z).toString('utf8')) as {
      html: string | null;
      text: string | null;
    };
    return { html: html ?? null, text: text ?? null };
  }
  return {
    html: (item.html as string | null | undefined) ?? null,
    text: (item.text as string | null | undefined) ?? null,
  };
}

/** A scheduled email is due once its time has come (`:nowIso`; ISO UTC times sort as text). */
const DUE = '(attribute_not_exists(scheduled_at) OR scheduled_at <= :nowIso)';
/** The due index's keys on a status item. */
const DUE_KEYS = EmailKeys.dueKeys;

/** Status items of these emails, 100 keys a read (missing ones left out). */
export async function readStates(db: DynamoDBDocumentClient, tableName: string, ids: string[]) {
  const found: EmailState[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const items = await batchGetAll(
      db,
      tableName,
      ids.slice(i, i + 100).map((id) => ({ pk: keys.email(id), sk: keys.status })),
      undefined,
      true,
    );
    for (const item of items) found.push(toState(keys.idOf(String(item.pk)), item));
  }
  return found;
}

/** An email's content: its summary and body items, in one batch read. */
export async function readContent(
  db: DynamoDBDocumentClient,
  tableName: string,
  id: string,
): Promise<EmailContent | null> {
  // Strongly consistent: the consumer reads a job that came as a reference moments after it was
  // stored, and an eventually consistent read may miss the summary (the email would be skipped)
  // or the body (it would go out without its bodies and tags).
  const items = await batchGetAll(
    db,
    tableName,
    [
      { pk: keys.email(id), sk: keys.summary },
      { pk: keys.email(id), sk: keys.body },
    ],
    undefined,
    true,
  );
  const summary = items.find((item) => item.sk === keys.summary);
  if (!summary) return null;
  const body: Item = items.find((item) => item.sk === keys.body) ?? {};
  const list = (value: unknown) => (value as string[] | undefined) ?? [];
  return {
    from: String(summary.from),
    to: list(summary.to),
    cc: list(summary.cc),
    bcc: list(summary.bcc),
    reply_to: list(summary.reply_to),
    subject: String(summary.subject),
    ...bodiesOf(body),
    ...extrasOf(body),
  };
}

/** Tags, headers, attachments and where large bodies are live in the body item, only when set. */
export const extras = ({
  tags,
  headers,
  attachments,
  body_key,
}: Pick<EmailContent, 'tags' | 'headers' | 'attachments' | 'body_key'>) => ({
  ...(tags.length ? { tags } : {}),
  ...(Object.keys(headers).length ? { headers } : {}),
  ...(attachments?.length ? { attachments } : {}),
  ...(body_key ? { body_key } : {}),
});

export const extrasOf = (
  body: Item,
): Pick<EmailContent, 'tags' | 'headers' | 'attachments' | 'body_key'> => ({
  tags: (body.tags as EmailContent['tags'] | undefined) ?? [],
  headers: (body.headers as EmailContent['headers'] | undefined) ?? {},
  ...(body.attachments ? { attachments: body.attachments as EmailContent['attachments'] } : {}),
  ...(body.body_key ? { body_key: String(body.body_key) } : {}),
});

/** Failure reasons are bounded so the status item stays small (one write unit per change). */
const bounded = (text: string) => text.slice(0, 200);

/**
 * The status item attribute holding the event that settled a one-recipient email, and the most it
 * may take (a larger one, with a long bounce diagnostic, is an item of its own): the item stays
 * under 1 KB even for a scheduled email with the longest failure reason (a test holds it to that),
 * so each of its changes is one write unit.
 */
const INLINE_EVENT = 'ev';
const INLINE_EVENT_MAX_BYTES = 300;

/** What makes two records of an event the same event (the sort key of its own item). */
const eventKey = (event: EmailEvent) => keys.event(event.at, event.type, eventDigest(event));

/** What tells one event from another of the same type and millisecond: whom it concerns and what it says. */
const eventDigest = (event: EmailEvent) =>
  createHash('sha256')
    .update(JSON.stringify([event.type, [...event.recipients].sort(), event.detail ?? '']))
    .digest('hex')
    .slice(0, 16);

export function toState(id: string, item: Item): EmailState {
  const state: EmailState = { id, status: item.status as EmailStatus, created_at: String(item.created_at) };
  if (item.sent_at) state.sent_at = String(item.sent_at);
  if (typeof item.send_started_at === 'number') state.send_started_at = item.send_started_at;
  if (item.attempt_error) state.attempt_error = String(item.attempt_error);
  if (typeof item.requeued_at === 'number') state.requeued_at = item.requeued_at;
  if (typeof item.refused_at === 'number') state.refused_at = item.refused_at;
  if (item.scheduled_at) state.scheduled_at = String(item.scheduled_at);
  if (item.key_id) state.key_id = String(item.key_id);
  if (item.dispatched) state.dispatched = String(item.dispatched);
  if (item[DUE_INDEX.partitionKey]) state.due_indexed = true;
  if (item.canceled === true) state.canceled = true;
  if (typeof item.rcpts === 'number') state.tally = tallyOf(item);
  return state;
}

function toSummary(id: string, status: Item, summary: Item): EmailSummary {
  return {
    id,
    status: status.status as EmailStatus,
    last_event: lastEventOf({
      status: status.status as EmailStatus,
      sent: Boolean(status.sent_at),
      delayed: status.delayed === true,
      complained: status.complained === true,
      delivered: status.delivered === true,
      bounced: status.bounced === true,
      suppressed: status.suppressed === true,
      scheduled: Boolean(status.scheduled_at),
      canceled: status.canceled === true,
    }),
    scheduled_at: (status.scheduled_at as string | undefined) ?? null,
    message_id: (status.provider_message_id as string | undefined) ?? null,
    created_at: String(status.created_at),
    from: String(summary.from),
    to: (summary.to as string[] | undefined) ?? [],
    cc: (summary.cc as string[] | undefined) ?? [],
    bcc: (summary.bcc as string[] | undefined) ?? [],
    reply_to: (summary.reply_to as string[] | undefined) ?? [],
    subject: String(summary.subject),
  };
}
