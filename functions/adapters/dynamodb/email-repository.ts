import { createHash } from 'node:crypto';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { EmailContent, EmailDetail, EmailEvent, EmailSummary } from '../../core/email.js';
import { FIRST_EMAIL_ID } from '../../core/ids.js';
import type { ListEmailsQuery } from '../../core/list.js';
import type { ClaimResult, EmailRepository, EmailState, FinishOptions, NewEmail } from '../../core/ports.js';
import { type EmailStatus, lastEventOf, type TerminalStatus } from '../../core/status.js';
import { batchGetAll, isConditionFailure, newestFirstPage, pause, queryPages } from './client.js';
import { INDEXES, keys } from './table.js';

type Item = Record<string, unknown>;

/** Emails in the single table. Status, summary and bodies are separate items (see table.ts). */
export class DynamoEmailRepository implements EmailRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create({ id, created_at, content }: NewEmail): Promise<void> {
    const pk = keys.email(id);
    const { html, text, tags, headers, ...summary } = content;
    // Summary and bodies first, the status item last: an email shows up (in lists, to the
    // consumer) only once all of it is stored; a failure in between leaves nothing visible.
    await this.batchWrite([
      { pk, sk: keys.summary, ...summary },
      { pk, sk: keys.body, html, text, ...extras({ tags, headers }) },
    ]);
    if (!(await this.putStatus(id, created_at))) throw new Error(`An email ${id} exists already`);
  }

  /**
   * Puts a new email's status item, never over an existing one; false when one exists that this
   * write did not make. (The SDK retries a write whose answer was lost; the retry then finds the
   * item its first try wrote: ids are unique, so an item with this id and creation time is its own.)
   */
  private async putStatus(id: string, created_at: string): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: statusItem(id, created_at),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await this.getState(id))?.created_at === created_at;
    }
  }

  async createMany(
    emails: NewEmail[],
    options: { mayExist?: boolean } = {},
  ): Promise<{ existing: string[] }> {
    const parts = emails.flatMap(({ id, content }) => {
      const { html, text, tags, headers, ...summary } = content;
      return [
        { pk: keys.email(id), sk: keys.summary, ...summary },
        { pk: keys.email(id), sk: keys.body, html, text, ...extras({ tags, headers }) },
      ];
    });
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
      await inChunks(emails.map(({ id, created_at }) => statusItem(id, created_at)));
      return { existing: [] };
    }
    // Ids a request that died may have used: each status item conditional, never over an email
    // that exists (its status and attempt record would be reset). The same write units.
    const written = await Promise.all(emails.map(({ id, created_at }) => this.putStatus(id, created_at)));
    return { existing: emails.filter((_, i) => !written[i]).map(({ id }) => id) };
  }

  async states(ids: string[]): Promise<EmailState[]> {
    return readStates(this.db, this.tableName, ids);
  }

  async get(id: string): Promise<EmailDetail | null> {
    const items: Item[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.email(id) },
    }))
      items.push(...page);

    const bySk = (sk: string) => items.find((item) => item.sk === sk);
    const status = bySk(keys.status);
    const summary = bySk(keys.summary);
    if (!status || !summary) return null;
    const body = bySk(keys.body) ?? {};
    const events = items
      .filter((item) => String(item.sk).startsWith(keys.eventPrefix))
      .map(
        (item): EmailEvent => ({
          type: String(item.type),
          at: String(item.at),
          recipients: (item.recipients as string[] | undefined) ?? [],
          ...(item.detail ? { detail: String(item.detail) } : {}),
        }),
      );
    return {
      ...toSummary(id, status, summary),
      html: (body.html as string | null | undefined) ?? null,
      text: (body.text as string | null | undefined) ?? null,
      ...extrasOf(body),
      sent_at: (status.sent_at as string | undefined) ?? null,
      failure_reason: (status.failure_reason as string | undefined) ?? null,
      events,
    };
  }

  async list(query: ListEmailsQuery): Promise<{ data: EmailSummary[]; has_more: boolean }> {
    const { status } = query;
    const index = status ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    // The index's sort key is the id, and ids sort by creation time.
    const { items: page, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        IndexName: index.name,
        partitionKey: index.partitionKey,
        sortKey: index.sortKey,
        partition: status ? keys.emailsWithStatus(status) : keys.allEmails,
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
    const bySk = (sk: string) =>
      new Map(found.filter((item) => item.sk === sk).map((item) => [item.pk, item]));
    const summaries = bySk(keys.summary);
    const states = bySk(keys.status);
    const data: EmailSummary[] = [];
    for (const entry of page) {
      const summary = summaries.get(entry.pk);
      // The index entry (status, created_at) stands in for a status item the read did not see yet.
      if (summary) data.push(toSummary(keys.idOf(String(entry.pk)), states.get(entry.pk) ?? entry, summary));
    }
    return { data, has_more };
  }

  async getState(id: string): Promise<EmailState | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.statusKey(id), ConsistentRead: true }),
    );
    return Item ? toState(id, Item) : null;
  }

  async claim(id: string, nowMs: number): Promise<ClaimResult> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          UpdateExpression: 'SET send_started_at = :now',
          // No expiry: once an attempt began, no other is ever started (see deliver-email.ts).
          ConditionExpression:
            'attribute_exists(pk) AND #status = :queued AND attribute_not_exists(sent_at) AND ' +
            'attribute_not_exists(send_started_at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':queued': 'queued', ':now': nowMs },
        }),
      );
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // Rare path (a duplicate message): read why the claim was refused.
    const state = await this.getState(id);
    if (!state) return 'missing';
    if (state.status !== 'queued' || state.sent_at) return 'done';
    return 'in_progress';
  }

  async release(id: string, startedAtMs: number, nowMs: number): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.statusKey(id),
          // When it was refused: its message is retried from then on, so the sweeper waits from then.
          UpdateExpression: 'SET refused_at = :now REMOVE send_started_at, attempt_error',
          // Only this worker's own attempt, and only while nothing says it was sent.
          ConditionExpression: 'send_started_at = :mine AND attribute_not_exists(sent_at)',
          ExpressionAttributeValues: { ':mine': startedAtMs, ':now': nowMs },
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
  ): Promise<void> {
    // In the same write: a delay or complaint costs nothing more than recording the email as sent.
    // A flag, not a time: last_event needs only whether it happened, and the status item stays small.
    const marked = mark ? `, ${mark} = :true` : '';
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.statusKey(id),
        // The consumer and the provider's Send event both record it; the first record stands.
        UpdateExpression:
          'SET sent_at = if_not_exists(sent_at, :at), provider_message_id = if_not_exists(provider_message_id, :mid)' +
          `${marked} REMOVE attempt_error`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: {
          ':at': at,
          ':mid': providerMessageId,
          ...(mark ? { ':true': true } : {}),
        },
      }),
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
    const { reason, guard, sent } = options;
    const set = ['#status = :status', 'gsi2pk = :gsi2pk', 'finished_at = :at'];
    const values: Item = {
      ':status': status,
      ':gsi2pk': keys.emailsWithStatus(status),
      ':at': at,
      ':queued': 'queued',
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
    if (guard && 'unsent' in guard)
      conditions.push('attribute_not_exists(sent_at)', 'attribute_not_exists(send_started_at)');
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
          UpdateExpression: `SET ${set.join(', ')}`,
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
        Item: { pk: keys.email(id), sk: keys.event(event.at, event.type, eventDigest(event)), ...event },
      }),
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

/** A new email's status item: queued, in both listing indexes. */
const statusItem = (id: string, created_at: string): Item => ({
  pk: keys.email(id),
  sk: keys.status,
  status: 'queued',
  created_at,
  gsi1pk: keys.allEmails,
  gsi1sk: id,
  gsi2pk: keys.emailsWithStatus('queued'),
  gsi2sk: id,
});

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

/** Tags and headers live in the body item, and only when there are some. */
export const extras = ({ tags, headers }: Pick<EmailContent, 'tags' | 'headers'>) => ({
  ...(tags.length ? { tags } : {}),
  ...(Object.keys(headers).length ? { headers } : {}),
});

export const extrasOf = (body: Item): Pick<EmailContent, 'tags' | 'headers'> => ({
  tags: (body.tags as EmailContent['tags'] | undefined) ?? [],
  headers: (body.headers as EmailContent['headers'] | undefined) ?? {},
});

/** Failure reasons are bounded so the status item stays small (one write unit per change). */
const bounded = (text: string) => text.slice(0, 200);

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
    }),
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
