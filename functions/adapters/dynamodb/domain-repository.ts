import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  checkedRecords,
  DEFAULT_SETTINGS,
  DOMAIN_ID_PREFIX,
  type Domain,
  type DomainConfigurationSet,
  type DomainStatus,
  type TlsMode,
} from '../../domains/model.js';
import type { DomainRepository, NameClaim } from '../../domains/ports.js';
import type { PageQuery } from '../../shared/list.js';
import { newestFirstPage, queryPages, writeIf } from './client.js';
import { keys } from './table.js';
import { UniqueNames } from './unique-names.js';

type Item = Record<string, unknown>;

/** A domain item; one stored before settings existed has the defaults (tracking and receiving off). */
const toDomain = (item: Item): Domain => ({
  id: String(item.id),
  domain: String(item.domain),
  status: item.status as DomainStatus,
  sendable: item.sendable === true,
  records: checkedRecords((item.records ?? []) as { record: string }[]),
  created_at: String(item.created_at),
  checked_at: String(item.checked_at),
  open_tracking: item.open_tracking === true,
  click_tracking: item.click_tracking === true,
  tls: (item.tls as TlsMode | undefined) ?? DEFAULT_SETTINGS.tls,
  ...(typeof item.tracking_subdomain === 'string' ? { tracking_subdomain: item.tracking_subdomain } : {}),
  ...(typeof item.custom_return_path === 'string' ? { custom_return_path: item.custom_return_path } : {}),
  ...(item.configuration_set ? { configuration_set: item.configuration_set as DomainConfigurationSet } : {}),
  ...(typeof item.tracking_problem === 'string' ? { tracking_problem: item.tracking_problem } : {}),
  receiving: item.receiving === true,
  ...(typeof item.receiving_problem === 'string' ? { receiving_problem: item.receiving_problem } : {}),
  version: Number(item.version ?? 0),
});

/**
 * Sending domains in the single table: the domain item (in the `DOMAINS` partition, so listing is
 * one Query) and a small name item that keeps names unique and answers the send path's check. Both
 * hold `receiving` (the receipt-rule writer lists the receiving domains with the one Query).
 */
export class DynamoDomainRepository implements DomainRepository {
  /** Domain names, one domain each: a name's claim is held for good once its domain exists. */
  private readonly names: UniqueNames;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.names = new UniqueNames(db, tableName, (name) => this.nameKey(name));
  }

  private nameKey(domain: string) {
    return { pk: keys.domainName(domain), sk: keys.domainNameSk };
  }

  private domainKey(id: string) {
    return { pk: keys.domains, sk: keys.domain(id) };
  }

  claimName(domain: string, id: string, nowMs: number, leaseMs: number): Promise<NameClaim> {
    return this.names.claim(domain, id, {
      nowMs,
      leaseMs,
      holds: async (holder) => (await this.get(holder)) !== null,
    });
  }

  releaseName(domain: string, id: string): Promise<void> {
    return this.names.release(domain, id);
  }

  async save(domain: Domain, mode: 'new' | 'existing'): Promise<boolean> {
    const version = domain.version ?? 0;
    if (
      !(await writeIf(
        this.db,
        new PutCommand({
          TableName: this.tableName,
          Item: { ...this.domainKey(domain.id), ...domain, version: version + 1 },
          // Over the version it was read at (items from before versions have none: 0).
          ...(mode === 'existing'
            ? {
                ConditionExpression: version
                  ? 'attribute_exists(pk) AND version = :version'
                  : 'attribute_exists(pk) AND (attribute_not_exists(version) OR version = :version)',
                ExpressionAttributeValues: { ':version': version },
              }
            : {}),
        }),
      ))
    )
      return false;
    // Then the name item, which the send path reads: only for the domain that holds the name.
    await this.updateName(domain, version + 1);
    return true;
  }

  /**
   * The name item, which the send path reads: only for the domain that holds the name, and only
   * over an older version of it (two writers' name updates may arrive in either order).
   */
  private async updateName(domain: Domain, version: number): Promise<void> {
    await writeIf(
      this.db,
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.nameKey(domain.domain),
        UpdateExpression: `SET #state = :active, #status = :status, sendable = :sendable, open_tracking = :open, click_tracking = :click, receiving = :receiving, domain_version = :version${
          domain.configuration_set ? ', configuration_set = :set' : ' REMOVE configuration_set'
        }`,
        ConditionExpression:
          'id = :id AND (attribute_not_exists(domain_version) OR domain_version <= :version)',
        ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
        ExpressionAttributeValues: {
          ':active': 'active',
          ':status': domain.status,
          ':sendable': domain.sendable,
          ':open': domain.open_tracking,
          ':click': domain.click_tracking,
          ':receiving': domain.receiving,
          ':id': domain.id,
          ':version': version,
          ...(domain.configuration_set ? { ':set': domain.configuration_set.name } : {}),
        },
      }),
    );
  }

  async syncName(domain: Domain): Promise<void> {
    await this.updateName(domain, domain.version ?? 0);
  }

  async retireConfigurationSet(name: string, deleteAfterMs: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: keys.retiredSets, sk: keys.retiredSet(name), name, delete_after: deleteAfterMs },
      }),
    );
  }

  async retiredConfigurationSets(nowMs: number): Promise<string[]> {
    const names: string[] = [];
    for await (const page of queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'delete_after <= :now',
      ExpressionAttributeValues: { ':pk': keys.retiredSets, ':now': nowMs },
      ConsistentRead: true,
    }))
      for (const item of page) names.push(String(item.name));
    return names;
  }

  async forgetRetiredConfigurationSet(name: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: keys.retiredSets, sk: keys.retiredSet(name) },
      }),
    );
  }

  async get(id: string): Promise<Domain | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: this.domainKey(id), ConsistentRead: true }),
    );
    return Item ? toDomain(Item) : null;
  }

  private pages(newestFirst: boolean, limit?: number) {
    return queryPages(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.domains, ':prefix': keys.domainPrefix },
      ScanIndexForward: !newestFirst, // ids sort by creation time
      ConsistentRead: true,
      Limit: limit,
    });
  }

  async list(query: PageQuery) {
    const { items, has_more } = await newestFirstPage(
      this.db,
      {
        TableName: this.tableName,
        ConsistentRead: true,
        partitionKey: 'pk',
        sortKey: 'sk',
        partition: keys.domains,
        prefix: `${keys.domainPrefix}${DOMAIN_ID_PREFIX}_`,
        sortKeyOf: keys.domain,
      },
      query,
    );
    return { data: items.map(toDomain), has_more };
  }

  async *all(): AsyncIterable<Domain> {
    for await (const page of this.pages(false)) for (const item of page) yield toDomain(item);
  }

  async senderState(domain: string) {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: this.nameKey(domain),
        ProjectionExpression: '#state, #status, sendable, open_tracking, click_tracking, configuration_set',
        ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
      }),
    );
    if (Item?.state !== 'active') return null;
    return {
      status: Item.status as DomainStatus,
      sendable: Item.sendable === true,
      openTracking: Item.open_tracking === true,
      clickTracking: Item.click_tracking === true,
      ...(typeof Item.configuration_set === 'string' ? { configurationSet: Item.configuration_set } : {}),
    };
  }

  async delete(domain: Domain): Promise<void> {
    await writeIf(
      this.db,
      new DeleteCommand({
        TableName: this.tableName,
        Key: this.nameKey(domain.domain),
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': domain.id },
      }),
    );
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: this.domainKey(domain.id) }));
  }
}
