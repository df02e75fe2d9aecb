import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { EmailDetail, EmailEvent, EmailSummary } from '../../core/email.js';
import type { ListEmailsQuery } from '../../core/list.js';
import type { ClaimResult, EmailRepository, NewEmail } from '../../core/ports.js';
import type { EmailStatus, TerminalStatus } from '../../core/status.js';
import { batchGetAll, isConditionFailure, pageOf, pause, queryPages } from './client.js';
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
    const { html, text, ...summary } = content;
    // Summary and bodies first, the status item last: an email shows up (in lists, to the
    // consumer) only once all of it is stored; a failure in between leaves nothing visible.
    await this.batchWrite([
      { pk, sk: keys.summary, ...summary },
      { pk, sk: keys.body, html, text },
    ]);
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk,
          sk: keys.status,
          status: 'queued',
          created_at,
          gsi1pk: keys.allEmails,
          gsi1sk: id,
          gsi2pk: keys.emailsWithStatus('queued'),
          gsi2sk: id,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
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
      sent_at: (status.sent_at as string | undefined) ?? null,
      failure_reason: (status.failure_reason as string | undefined) ?? null,
      events,
    };
  }

  async list({
    limit,
    offset,
    status,
  }: ListEmailsQuery): Promise<{ data: EmailSummary[]; has_more: boolean }> {
    const index = status ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    const partition = status ? keys.emailsWithStatus(status) : keys.allEmails;
    const { items: page, has_more } = await pageOf(
      queryPages(this.db, {
        TableName: this.tableName,
        IndexName: index.name,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': index.partitionKey },
        ExpressionAttributeValues: { ':pk': partition },
        ScanIndexForward: false, // ids sort by creation time: newest first
        Limit: Math.min(offset + limit + 1, 1000),
      }),
      { limit, offset },
    );
    if (page.length === 0) return { data: [], has_more };

    const summaries = await batchGetAll(
      this.db,
      this.tableName,
      page.map((entry) => ({ pk: entry.pk, sk: keys.summary })),
    );
    const byPk = new Map(summaries.map((item) => [item.pk, item]));
    const data: EmailSummary[] = [];
    for (const entry of page) {
      const summary = byPk.get(entry.pk);
      if (summary) data.push(toSummary(keys.idOf(String(entry.pk)), entry, summary));
    }
    return { data, has_more };
  }

  async claim(id: string, nowMs: number, leaseMs: number): Promise<ClaimResult> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.email(id), sk: keys.status },
          UpdateExpression: 'SET lease_until = :until',
          ConditionExpression:
            'attribute_exists(pk) AND #status = :queued AND attribute_not_exists(sent_at) AND ' +
            '(attribute_not_exists(lease_until) OR lease_until < :now)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':queued': 'queued', ':now': nowMs, ':until': nowMs + leaseMs },
        }),
      );
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // Rare path (a duplicate message): read why the claim was refused.
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        ConsistentRead: true,
      }),
    );
    if (!Item) return 'missing';
    if (Item.status !== 'queued' || Item.sent_at) return 'done';
    return 'busy';
  }

  async release(id: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: 'REMOVE lease_until',
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  }

  async markSent(id: string, providerMessageId: string, at: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keys.email(id), sk: keys.status },
        UpdateExpression: 'SET sent_at = :at, provider_message_id = :mid REMOVE lease_until',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at, ':mid': providerMessageId },
      }),
    );
  }

  async finish(id: string, status: TerminalStatus, at: string, reason?: string): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.email(id), sk: keys.status },
          UpdateExpression: `SET #status = :status, gsi2pk = :gsi2pk, finished_at = :at${reason ? ', failure_reason = :reason' : ''} REMOVE lease_until`,
          // Forward only: a late or repeated event finds the email already final and changes nothing.
          ConditionExpression: '#status = :queued',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':status': status,
            ':gsi2pk': keys.emailsWithStatus(status),
            ':at': at,
            ':queued': 'queued',
            // Bounded so the status item stays small (one write unit per status change).
            ...(reason ? { ':reason': reason.slice(0, 200) } : {}),
          },
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
        // The key is derived from the event, so a redelivered event overwrites itself.
        Item: { pk: keys.email(id), sk: keys.event(event.at, event.type), ...event },
      }),
    );
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

function toSummary(id: string, status: Item, summary: Item): EmailSummary {
  return {
    id,
    status: status.status as EmailStatus,
    created_at: String(status.created_at),
    from: String(summary.from),
    to: (summary.to as string[] | undefined) ?? [],
    cc: (summary.cc as string[] | undefined) ?? [],
    bcc: (summary.bcc as string[] | undefined) ?? [],
    reply_to: (summary.reply_to as string[] | undefined) ?? [],
    subject: String(summary.subject),
  };
}
