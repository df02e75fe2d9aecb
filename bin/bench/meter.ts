/**
 * What each AWS request of the functions costs, metered the way AWS bills it: requests by function
 * and operation, and for DynamoDB the write units (the larger of the item before and after, 1 KB a
 * unit; a failed condition still bills the item; every global secondary index entry that is put,
 * changed or deleted bills its own size) and read units (4 KB a unit, half for an eventually
 * consistent read). dynalite reports neither index writes nor failed conditions, so the meter reads
 * each written item before and after its write with a client of its own (not counted): it is meant
 * for a run of a few hundred emails, not for the throughput run.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { useClientPlugin } from '../../functions/adapters/aws-clients.js';
import { createDocumentClient } from '../../functions/adapters/dynamodb/client.js';
import { INDEXES, projectionOf, TABLE_KEYS } from '../../functions/adapters/dynamodb/table.js';
import { currentFunction } from '../../local/invocation.js';

type Item = Record<string, unknown>;
type Key = { pk: string; sk: string };

export interface MeterLine {
  requests: number;
  writeUnits: number;
  readUnits: number;
  /** SQS messages sent (a SendMessageBatch carries up to ten). */
  messages: number;
}

/** DynamoDB's item size: attribute names and values in UTF-8, numbers about 1 byte per 2 digits. */
export function itemBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace('.', '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + itemBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + itemBytes(v), 0);
  if (typeof value === 'object')
    return (
      3 +
      Object.entries(value as Item).reduce(
        (sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + itemBytes(v),
        0,
      )
    );
  return 0;
}

const sizeOf = (item: Item) =>
  Object.entries(item).reduce((sum, [name, v]) => sum + Buffer.byteLength(name) + itemBytes(v), 0);
const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** The index entry an item has in each global secondary index (undefined: not in it). */
function indexEntries(item: Item | undefined): Record<string, Item | undefined> {
  const entries: Record<string, Item | undefined> = {};
  for (const index of Object.values(INDEXES)) {
    if (!item || item[index.partitionKey] === undefined || item[index.sortKey] === undefined) {
      entries[index.name] = undefined;
      continue;
    }
    const names: string[] = [index.partitionKey, index.sortKey, TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey];
    const projection = projectionOf(index.name);
    if (projection.ProjectionType === 'INCLUDE') names.push(...projection.NonKeyAttributes);
    entries[index.name] = Object.fromEntries(
      names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]),
    );
  }
  return entries;
}

/** Write units of one item's change: the table's, and each index entry put, changed or removed. */
export function changeUnits(before: Item | undefined, after: Item | undefined, failed = false): number {
  const table = writeUnits(Math.max(before ? sizeOf(before) : 0, after && !failed ? sizeOf(after) : 0));
  if (failed) return table;
  const old = indexEntries(before);
  const now = indexEntries(after);
  let indexes = 0;
  for (const name of Object.keys(now)) {
    const a = old[name];
    const b = now[name];
    if (!a && !b) continue;
    if (a && b && JSON.stringify(a) === JSON.stringify(b)) continue;
    const index = Object.values(INDEXES).find((i) => i.name === name);
    const sameKey =
      a &&
      b &&
      index &&
      a[index.partitionKey] === b[index.partitionKey] &&
      a[index.sortKey] === b[index.sortKey];
    if (sameKey) indexes += writeUnits(sizeOf(b));
    else {
      if (a) indexes += writeUnits(sizeOf(a));
      if (b) indexes += writeUnits(sizeOf(b));
    }
  }
  return table + indexes;
}

/** The kind of item a key names, for the table's rows: STATUS, BODY, EVENT, RATE, … */
const kindOf = (key: Item) => String(key.sk ?? '').replace(/#.*$/, '');

/**
 * Meters every AWS call the functions make from now on. `label(fn, op, kind)` rows sum requests
 * and units; `detach()` passes every call through again.
 */
export function startMeter() {
  // Its plugin must be in place before the functions build their clients; what it reads with comes later.
  let db: DynamoDBDocumentClient | undefined;
  let tableName = '';
  const lines = new Map<string, MeterLine>();
  const add = (label: string, change: Partial<MeterLine>) => {
    const line = lines.get(label) ?? { requests: 0, writeUnits: 0, readUnits: 0, messages: 0 };
    line.requests += change.requests ?? 0;
    line.messages += change.messages ?? 0;
    line.writeUnits += change.writeUnits ?? 0;
    line.readUnits += change.readUnits ?? 0;
    lines.set(label, line);
  };
  const read = async (key: Item) =>
    (await db?.send(new GetCommand({ TableName: tableName, Key: key as Key, ConsistentRead: true })))?.Item;
  const readMany = async (keys: Item[]) => {
    const found = new Map<string, Item>();
    for (let i = 0; i < keys.length; i += 100) {
      if (!db) break;
      const { Responses } = await db.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: keys.slice(i, i + 100) as Key[], ConsistentRead: true } },
        }),
      );
      for (const item of Responses?.[tableName] ?? []) found.set(`${item.pk}|${item.sk}`, item);
    }
    return keys.map((key) => found.get(`${key.pk}|${key.sk}`));
  };
  const readUnitsOf = (items: (Item | undefined)[], consistent: boolean) =>
    items.reduce((sum: number, item) => sum + Math.max(1, Math.ceil((item ? sizeOf(item) : 1) / 4096)), 0) /
    (consistent ? 1 : 2);

  useClientPlugin({
    applyToStack(stack) {
      stack.add(
        (
          next: (args: unknown) => Promise<{ output: Item }>,
          context: { clientName?: string; commandName?: string },
        ) =>
          async (args: { input: Item }) => {
            if (!db) return next(args);
            const fn = currentFunction() ?? '(local runtime)';
            const service = (context.clientName ?? '').replace(/Client$/, '');
            const op = (context.commandName ?? '').replace(/Command$/, '');
            const input = args.input;
            if (service !== 'DynamoDB') {
              const messages =
                op === 'SendMessageBatch'
                  ? ((input.Entries as unknown[] | undefined)?.length ?? 0)
                  : op === 'SendMessage'
                    ? 1
                    : 0;
              add(`${fn} | ${service}:${op}`, { requests: 1, messages });
              return next(args);
            }
            if (op === 'PutItem' || op === 'UpdateItem' || op === 'DeleteItem') {
              const key = (
                op === 'PutItem' ? { pk: (input.Item as Item).pk, sk: (input.Item as Item).sk } : input.Key
              ) as Item;
              const before = await read(key);
              try {
                const result = await next(args);
                add(`${fn} | DynamoDB:${op} ${kindOf(key)}`, {
                  requests: 1,
                  writeUnits: changeUnits(before, await read(key)),
                });
                return result;
              } catch (error) {
                add(`${fn} | DynamoDB:${op} ${kindOf(key)} (condition failed)`, {
                  requests: 1,
                  writeUnits: changeUnits(before, undefined, true),
                });
                throw error;
              }
            }
            if (op === 'BatchWriteItem') {
              const requests = Object.values(input.RequestItems as Record<string, Item[]>).flat();
              const keys = requests.map((r) => {
                const put = r.PutRequest as { Item: Item } | undefined;
                return put
                  ? { pk: put.Item.pk, sk: put.Item.sk }
                  : ((r.DeleteRequest as { Key: Item }).Key as Item);
              });
              const before = await readMany(keys);
              const result = await next(args);
              const after = await readMany(keys);
              const kinds = [...new Set(keys.map(kindOf))].sort().join('+');
              add(`${fn} | DynamoDB:BatchWriteItem ${kinds}`, {
                requests: 1,
                writeUnits: keys.reduce((sum: number, _, i) => sum + changeUnits(before[i], after[i]), 0),
              });
              return result;
            }
            const result = await next(args);
            const output = result.output as Item;
            if (op === 'GetItem') {
              const key = input.Key as Item;
              const full = await read(key);
              add(`${fn} | DynamoDB:GetItem ${kindOf(key)}`, {
                requests: 1,
                readUnits: readUnitsOf([full], Boolean(input.ConsistentRead)),
              });
            } else if (op === 'BatchGetItem') {
              const spec = Object.values(
                input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>,
              )[0];
              const keys = spec?.Keys ?? [];
              const full = await readMany(keys);
              const kinds = [...new Set(keys.map(kindOf))].sort().join('+');
              add(`${fn} | DynamoDB:BatchGetItem ${kinds}`, {
                requests: 1,
                readUnits: readUnitsOf(full, Boolean(spec?.ConsistentRead)),
              });
            } else if (op === 'Query' || op === 'Scan') {
              const items = (output.Items as Item[] | undefined) ?? [];
              const bytes = items.reduce((sum, item) => sum + sizeOf(item), 0);
              add(`${fn} | DynamoDB:${op}${input.IndexName ? ` ${String(input.IndexName)}` : ''}`, {
                requests: 1,
                readUnits: Math.max(1, Math.ceil(bytes / 4096)) / (input.ConsistentRead ? 1 : 2),
              });
            } else add(`${fn} | DynamoDB:${op}`, { requests: 1 });
            return result;
          },
        { step: 'initialize', name: 'benchMeter' },
      );
    },
  });

  return {
    /** Starts metering, reading items through this client (not metered itself). */
    attach(raw: DynamoDBClient, table: string) {
      db = createDocumentClient(raw);
      tableName = table;
      lines.clear();
    },
    /** Stops metering (the clients' middleware passes every call through). */
    detach() {
      db = undefined;
    },
    lines: () => new Map([...lines].map(([label, line]) => [label, { ...line }])),
  };
}
