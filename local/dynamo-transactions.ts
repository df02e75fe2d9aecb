import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);

/**
 * TransactWriteItems for dynalite, which has none (it answers UnknownOperationException): the
 * contacts' writes (a contact with its id item, memberships and choices) and an import's chunk with
 * its checkpoint are one transaction on AWS, and must be one locally. Served in front of dynalite's
 * own handler, one transaction at a time: every item's condition is checked first against the item
 * as it is (dynalite's own expression parser and evaluator), and only when all hold are the writes
 * made, each as dynalite's own PutItem, UpdateItem or DeleteItem; otherwise nothing is written and
 * the answer is DynamoDB's TransactionCanceledException with one cancellation reason an item. As
 * DynamoDB, it refuses more than 100 items and two operations on one item. Not isolated from the
 * plain writes made meanwhile (a local twin, not a database): enough for one process's tests.
 */

type Attr = Record<string, unknown>;
type Op = { Put?: Attr; Update?: Attr; Delete?: Attr; ConditionCheck?: Attr };

const validations = require('dynalite/validations') as {
  validateExpressions(data: Attr): string | undefined;
};
const db = require('dynalite/db') as { matchesExprFilter(item: Attr, expr: unknown): boolean };

const TYPE = 'com.amazonaws.dynamodb.v20120810#';
const MAX_ITEMS = 100;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** One call to dynalite itself, with the caller's headers (dynalite checks they are there, not their signature). */
function call(
  server: Server,
  headers: IncomingMessage['headers'],
  target: string,
  body: Attr,
): Promise<{ status: number; body: Attr }> {
  const { port } = server.address() as AddressInfo;
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: {
          authorization: headers.authorization ?? '',
          'x-amz-date': headers['x-amz-date'] ?? '',
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${target}`,
          'content-length': Buffer.byteLength(text),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 500, body: raw ? (JSON.parse(raw) as Attr) : {} });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const keyOf = (op: Attr, keyNames: readonly string[]): Attr =>
  op.Key ? (op.Key as Attr) : Object.fromEntries(keyNames.map((name) => [name, (op.Item as Attr)[name]]));

/** Each table's key attribute names, by server (a table's key never changes). */
const keyNamesOf = new WeakMap<Server, Map<string, string[]>>();

async function transact(
  server: Server,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
): Promise<void> {
  const input = JSON.parse(body) as { TransactItems?: Op[] };
  const items = input.TransactItems ?? [];
  if (items.length === 0 || items.length > MAX_ITEMS) {
    send(res, 400, {
      __type: `${TYPE}ValidationException`,
      message: `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ITEMS}`,
    });
    return;
  }
  const tables = keyNamesOf.get(server) ?? new Map<string, string[]>();
  keyNamesOf.set(server, tables);
  const ops = items.map((item) => {
    const [kind, op] = Object.entries(item)[0] as [keyof Op, Attr];
    return { kind, op };
  });
  const seen = new Set<string>();
  const existing: (Attr | undefined)[] = [];
  for (const { op } of ops) {
    const table = String(op.TableName);
    let keyNames = tables.get(table);
    if (!keyNames) {
      const described = await call(server, req.headers, 'DescribeTable', { TableName: table });
      const schema = ((described.body.Table as Attr | undefined)?.KeySchema ?? []) as {
        AttributeName: string;
      }[];
      keyNames = schema.map((k) => k.AttributeName);
      tables.set(table, keyNames);
    }
    const key = keyOf(op, keyNames);
    const id = `${table}|${JSON.stringify(key)}`;
    if (seen.has(id)) {
      send(res, 400, {
        __type: `${TYPE}ValidationException`,
        message: 'Transaction request cannot include multiple operations on one item',
      });
      return;
    }
    seen.add(id);
    const got = await call(server, req.headers, 'GetItem', {
      TableName: table,
      Key: key,
      ConsistentRead: true,
    });
    if (got.status !== 200) {
      send(res, got.status, got.body);
      return;
    }
    existing.push(got.body.Item as Attr | undefined);
  }
  const reasons = ops.map(({ op }, i) => {
    if (op.ConditionExpression === undefined) return { Code: 'None' };
    const parsed: Attr = { ...op };
    const invalid = validations.validateExpressions(parsed);
    if (invalid) return { Code: 'ValidationError', Message: invalid };
    const holds = db.matchesExprFilter(existing[i] ?? {}, (parsed._condition as Attr).expression);
    return holds
      ? { Code: 'None' }
      : { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' };
  });
  if (reasons.some((reason) => reason.Code !== 'None')) {
    send(res, 400, {
      __type: `${TYPE}TransactionCanceledException`,
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
      CancellationReasons: reasons,
    });
    return;
  }
  const targets = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem' } as const;
  for (const { kind, op } of ops) {
    if (kind === 'ConditionCheck') continue;
    const done = await call(server, req.headers, targets[kind as keyof typeof targets], op);
    if (done.status !== 200) {
      send(res, done.status, done.body);
      return;
    }
  }
  send(res, 200, {});
}

/** Serves TransactWriteItems in front of a dynalite server's own handler, one at a time. */
export function withTransactions(server: Server): Server {
  const [serve] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (!serve) return server;
  let queue: Promise<void> = Promise.resolve();
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['x-amz-target'] !== 'DynamoDB_20120810.TransactWriteItems') return serve(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      queue = queue.then(() =>
        transact(server, req, res, body).catch((error: unknown) =>
          send(res, 500, { __type: `${TYPE}InternalServerError`, message: String(error) }),
        ),
      );
    });
  });
  return server;
}

let applied = false;

/** Makes every dynalite server created from now on (`require('dynalite')(…)`) serve transactions. */
export function applyDynamoTransactions(): void {
  if (applied) return;
  applied = true;
  const path = require.resolve('dynalite');
  require(path);
  const cached = require.cache[path];
  if (!cached) return;
  const dynalite = cached.exports as (opts: Record<string, unknown>) => Server;
  cached.exports = (opts: Record<string, unknown>) => withTransactions(dynalite(opts));
}
