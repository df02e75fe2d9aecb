import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiKey, Permission } from '../../core/api-keys.js';
import type { ApiKeyRepository } from '../../core/ports.js';
import { keys } from './table.js';

/** API keys, looked up by the SHA-256 of the token (the token itself is never stored). */
export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findByHash(hash: string): Promise<ApiKey | null> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: keys.apiKey(hash), sk: keys.apiKeySk } }),
    );
    if (!Item) return null;
    return {
      id: String(Item.id),
      name: String(Item.name),
      permission: Item.permission as Permission,
      hash,
      created_at: String(Item.created_at),
    };
  }

  async put(key: ApiKey): Promise<void> {
    const { hash, ...rest } = key;
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: keys.apiKey(hash), sk: keys.apiKeySk, ...rest },
      }),
    );
  }

  async deleteByHash(hash: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: { pk: keys.apiKey(hash), sk: keys.apiKeySk } }),
    );
  }
}
