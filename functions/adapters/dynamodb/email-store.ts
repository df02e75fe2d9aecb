import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';
import type { StoredAttachment } from '../../emails/attachments.js';
import type { EmailContent, EmailDetail, EmailEvent } from '../../emails/email.js';
import type { ListEmailsQuery } from '../../emails/list-query.js';
import type { EmailPage, EmailState, NewEmail } from '../../emails/ports.js';
import { recipientOutcomes, recipientsOf } from '../../emails/recipients.js';
import { searchTermsOf } from '../../emails/search.js';
import { pause, queryPages, writeIf } from './client.js';
import {
  bodiesOf,
  eventKey,
  extras,
  extrasOf,
  INLINE_EVENT,
  readContent,
  readStates,
  storedBodies,
  suppressedOf,
  toState,
  toSummary,
} from './email-items.js';
import { EmailKeys, type TableLayout } from './email-keys.js';
import { EmailListing } from './email-search.js';
import { keys } from './table.js';

type Item = Record<string, unknown>;

/**
 * Emails in the single table, as stored and read: a new email's items (status, summary, bodies:
 * see table.ts, and email-items.ts for what each holds), written once, and every read of them.
 * What changes an email afterwards (its status item's transitions) is email-repository.ts.
 */
export class DynamoEmailStore {
  protected readonly deflate: boolean;
  protected readonly keys: EmailKeys;

  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly tableName: string,
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
    await this.writeAll(this.contentItems(email));
    if (!(await this.putStatus(this.statusItem(email))))
      throw new Error(`An email ${email.id} exists already`);
  }

  /**
   * An email's summary and body items (immutable), and its search entries (email-keys.ts,
   * "Search"), expiring with it.
   */
  private contentItems({ id, created_at, content, schedule }: NewEmail): Item[] {
    const pk = keys.email(id);
    const { html, text, tags, headers, attachments, body_key, template, topic_id, mime, ...summary } =
      content;
    const expiry = this.keys.expiry(created_at, schedule?.at);
    const search = this.keys.searchEntries(id, searchTermsOf(content), expiry);
    return [
      { pk, sk: keys.summary, ...summary, ...search.summary, ...expiry },
      {
        pk,
        sk: keys.body,
        ...storedBodies(html, text, this.deflate),
        ...extras({ tags, headers, attachments, body_key, template, topic_id, mime }),
        ...search.body,
        ...expiry,
      },
      ...search.items,
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
    const put = new PutCommand({
      TableName: this.tableName,
      Item: item,
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    if (await writeIf(this.db, put)) return true;
    return (await this.getState(keys.idOf(String(item.pk))))?.created_at === item.created_at;
  }

  async createMany(
    emails: NewEmail[],
    options: { mayExist?: boolean } = {},
  ): Promise<{ existing: string[] }> {
    const parts = emails.flatMap((email) => this.contentItems(email));
    // Written again for an email that exists, they are the same content (the same request, resumed).
    await this.writeAll(parts);
    if (!options.mayExist) {
      // Fresh ids: no status item exists, so batch writes (which cannot be conditional) are safe.
      await this.writeAll(emails.map((email) => this.statusItem(email)));
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
      ...(item.user_agent ? { user_agent: String(item.user_agent) } : {}),
      ...(item.ip_address ? { ip_address: String(item.ip_address) } : {}),
      ...(item.automated ? { automated: item.automated as EmailEvent['automated'] & string } : {}),
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

  list(query: ListEmailsQuery): Promise<EmailPage> {
    return new EmailListing(this.db, this.tableName, this.keys).list(query);
  }

  async getState(id: string): Promise<EmailState | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.statusKey(id), ConsistentRead: true }),
    );
    return Item ? toState(id, Item) : null;
  }

  /**
   * Items 25 a call (DynamoDB's limit), the calls side by side: an email's content alone may be
   * more than 25 items (a search item per further recipient and tag).
   */
  private async writeAll(items: Item[]): Promise<void> {
    const chunks: Item[][] = [];
    for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
    await Promise.all(chunks.map((chunk) => this.batchWrite(chunk)));
  }

  protected async batchWrite(items: Item[]): Promise<void> {
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

  protected statusKey(id: string) {
    return { pk: keys.email(id), sk: keys.status };
  }
}
