import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PageQuery } from '../../shared/list.js';
import {
  type PublishedTemplate,
  TEMPLATE_ID_PREFIX,
  type Template,
  type TemplateContent,
} from '../../templates/model.js';
import type { AliasClaim, TemplateRepository } from '../../templates/ports.js';
import { newestFirstPage, writeIf } from './client.js';
import { bodiesOf, storedBodies } from './email-items.js';
import { keys, TTL_ATTRIBUTE } from './table.js';
import { UniqueNames } from './unique-names.js';

type Item = Record<string, unknown>;

/** Longer than a create runs (the function's timeout): an alias claimed this recently is not taken over. */
export const ALIAS_CLAIM_LEASE_MS = 15_000;

/** How long a deleted template's tombstone keeps a publish under way from bringing it back. */
const TOMBSTONE_DAYS = 1;

/** A template's parts as an item holds them: html and text deflated together when large, as bodies are. */
const contentItem = ({ html, text, ...rest }: TemplateContent): Item => ({
  ...rest,
  ...storedBodies(html, text ?? null),
  has_text: text !== undefined,
});

const contentOf = (item: Item): TemplateContent => {
  const { html, text } = bodiesOf(item);
  return {
    ...(typeof item.from === 'string' ? { from: item.from } : {}),
    ...(typeof item.subject === 'string' ? { subject: item.subject } : {}),
    reply_to: (item.reply_to as string[] | undefined) ?? [],
    html: html ?? '',
    ...(item.has_text === true ? { text: text ?? '' } : {}),
    variables: (item.variables as TemplateContent['variables'] | undefined) ?? [],
  };
};

const toTemplate = (item: Item): Template => ({
  ...contentOf(item),
  id: String(item.id),
  name: String(item.name),
  ...(typeof item.alias === 'string' ? { alias: item.alias } : {}),
  created_at: String(item.created_at),
  updated_at: String(item.updated_at),
  current_version_id: String(item.current_version_id),
  status: item.status === 'published' ? 'published' : 'draft',
  published_at: typeof item.published_at === 'string' ? item.published_at : null,
  has_unpublished_versions: item.has_unpublished_versions === true,
  version: Number(item.version ?? 0),
});

/**
 * Templates in the single table: the template item (the current version, in the `TEMPLATES`
 * partition, so listing is one Query), the published version in an item of its own (what sends
 * read, one GetItem), and an item per alias that keeps aliases unique.
 */
export class DynamoTemplateRepository implements TemplateRepository {
  /**
   * Aliases, one template each: a claim is held while its template has that alias (whatever its
   * case); one whose create or change died is taken over after ALIAS_CLAIM_LEASE_MS.
   */
  private readonly aliases: UniqueNames;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.aliases = new UniqueNames(db, tableName, (name) => this.aliasKey(name));
  }

  private templateKey(id: string) {
    return { pk: keys.templates, sk: keys.template(id) };
  }

  private publishedKey(id: string) {
    return { pk: keys.publishedTemplate(id), sk: keys.publishedTemplateSk };
  }

  private aliasKey(alias: string) {
    return { pk: keys.templateAlias(alias), sk: keys.templateAliasSk };
  }

  claimAlias(alias: string, id: string, nowMs: number): Promise<AliasClaim> {
    return this.aliases.claim(alias, id, {
      nowMs,
      leaseMs: ALIAS_CLAIM_LEASE_MS,
      holds: async (holder) => (await this.get(holder))?.alias?.toLowerCase() === alias.toLowerCase(),
      fields: { alias },
    });
  }

  releaseAlias(alias: string, id: string): Promise<void> {
    return this.aliases.release(alias, id);
  }

  async save(template: Template, mode: 'new' | 'existing'): Promise<boolean> {
    const { version = 0, ...rest } = template;
    const { html, text, from, subject, reply_to, variables, ...meta } = rest;
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.templateKey(template.id),
          ...meta,
          ...contentItem({ html, text, from, subject, reply_to, variables }),
          version: version + 1,
        },
        ConditionExpression:
          mode === 'new'
            ? 'attribute_not_exists(pk)'
            : version
              ? 'version = :version'
              : 'attribute_exists(pk) AND (attribute_not_exists(version) OR version = :version)',
        ...(mode === 'new' ? {} : { ExpressionAttributeValues: { ':version': version } }),
      }),
    );
  }

  async get(id: string): Promise<Template | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.templateKey(id), ConsistentRead: true }),
    );
    return Item ? toTemplate(Item) : null;
  }

  async idOfAlias(alias: string): Promise<string | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.aliasKey(alias), ConsistentRead: true }),
    );
    return Item ? String(Item.id) : null;
  }

  async list(query: PageQuery) {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.templates,
        prefix: `${keys.templatePrefix}${TEMPLATE_ID_PREFIX}_`,
        sortKeyOf: keys.template,
      },
      query,
    );
    return { data: items.map(toTemplate), has_more };
  }

  async putPublished(templateVersion: number, published: PublishedTemplate): Promise<boolean> {
    const { html, text, from, subject, reply_to, variables, ...meta } = published;
    return writeIf(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.publishedKey(published.id),
          ...meta,
          ...contentItem({ html, text, from, subject, reply_to, variables }),
          template_version: templateVersion,
        },
        // Never over a deleted template's tombstone (a publish racing the delete brings nothing
        // back), nor over what the publish of a newer read of the template put.
        ConditionExpression:
          'attribute_not_exists(deleted) AND (attribute_not_exists(template_version) OR template_version <= :version)',
        ExpressionAttributeValues: { ':version': templateVersion },
      }),
    );
  }

  async published(id: string): Promise<PublishedTemplate | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.publishedKey(id), ConsistentRead: true }),
    );
    if (!Item || Item.deleted === true) return null;
    return {
      ...contentOf(Item),
      id: String(Item.id),
      version_id: String(Item.version_id),
      published_at: String(Item.published_at),
    };
  }

  async delete(template: Template, nowMs: number): Promise<void> {
    // The published version first, replaced by a tombstone: from then on no send can use it, and a
    // publish under way cannot put it back (DynamoDB's TTL removes the tombstone a day later).
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...this.publishedKey(template.id),
          deleted: true,
          [TTL_ATTRIBUTE]: Math.ceil(nowMs / 1000) + TOMBSTONE_DAYS * 86_400,
        },
      }),
    );
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: this.templateKey(template.id) }));
    if (template.alias) await this.releaseAlias(template.alias, template.id);
  }
}
