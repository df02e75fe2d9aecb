import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRepositories } from '../../functions/adapters/dynamodb/repositories.js';
import { CONSOLE_RATE_LIMIT, CONSOLE_REQUEST_HEADER } from '../../functions/api-keys/console-budget.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import type { Clock } from '../../functions/shared/ports.js';
import { context, httpEvent, parseBody } from '../support/events.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
let repos: ReturnType<typeof createRepositories>;
let now = Date.parse('2026-11-28T10:00:00.100Z');
const clock: Clock = { now: () => new Date(now) };
let list: Awaited<ReturnType<typeof listHandler>>;

const listHandler = async () =>
  (await import('../../functions/handlers/list-emails.js')).makeHandler({
    ...repos,
    clock,
    rateLimit: { perSecond: 10 },
  });

beforeAll(async () => {
  table = await startTestTable();
  repos = createRepositories(table.tableName, table.db);
  list = await listHandler();
});
afterAll(() => table.stop());
beforeEach(() => {
  // Each test in its own second.
  now += 10_000;
});

async function newToken() {
  const { key, token } = generateApiKey('console budget', 'full_access', new Date(now));
  await repos.apiKeys.put(key);
  return { key, token };
}

/** `count` requests to GET /v1/emails, from the console (its header) or from an application. */
async function requests(token: string, count: number, fromConsole: boolean) {
  const answers = [];
  for (let i = 0; i < count; i++)
    answers.push(
      await list(
        httpEvent({
          method: 'GET',
          path: '/v1/emails',
          token,
          headers: fromConsole ? { [CONSOLE_REQUEST_HEADER]: '1' } : {},
        }),
        context(),
      ),
    );
  return answers;
}

describe("the console's own budget", () => {
  it('a person browsing never takes the application’s rate: the console counts on its own 5 a second', async () => {
    const { token } = await newToken();
    // The console first, past its budget…
    const browsing = await requests(token, CONSOLE_RATE_LIMIT + 2, true);
    expect(browsing.map((r) => r.statusCode)).toEqual([...Array(CONSOLE_RATE_LIMIT).fill(200), 429, 429]);
    expect(browsing[0]?.headers?.['ratelimit-limit']).toBe(String(CONSOLE_RATE_LIMIT));
    const refused = browsing[CONSOLE_RATE_LIMIT];
    expect(refused?.headers?.['retry-after']).toBe('1');
    expect(parseBody(refused ?? {})).toMatchObject({ name: 'rate_limit_exceeded' });
    // …and the application, in the same second, still has all of its 10.
    const sending = await requests(token, 11, false);
    expect(sending.map((r) => r.statusCode)).toEqual([...Array(10).fill(200), 429]);
    expect(sending[0]?.headers?.['ratelimit-limit']).toBe('10');
  });

  it('an application at its limit leaves the console its 5; the next second both start again', async () => {
    const { token } = await newToken();
    expect((await requests(token, 11, false)).map((r) => r.statusCode)).toEqual([
      ...Array(10).fill(200),
      429,
    ]);
    expect((await requests(token, CONSOLE_RATE_LIMIT, true)).map((r) => r.statusCode)).toEqual(
      Array(CONSOLE_RATE_LIMIT).fill(200),
    );
    now += 1000;
    expect((await requests(token, 1, true))[0]?.statusCode).toBe(200);
    expect((await requests(token, 1, false))[0]?.statusCode).toBe(200);
  });

  it('never lifts a key set below 5 a second: the console takes at most the key’s own limit', async () => {
    const slow = await (await import('../../functions/handlers/list-emails.js')).makeHandler({
      ...repos,
      clock,
      rateLimit: { perSecond: 2 },
    });
    const { token } = await newToken();
    const codes = [];
    for (let i = 0; i < 3; i++)
      codes.push(
        (
          await slow(
            httpEvent({
              method: 'GET',
              path: '/v1/emails',
              token,
              headers: { [CONSOLE_REQUEST_HEADER]: '1' },
            }),
            context(),
          )
        ).statusCode,
      );
    expect(codes).toEqual([200, 200, 429]);
  });

  it('both counts live on the key’s item, and the stale ones of either are removed by later writes', async () => {
    const { token, key } = await newToken();
    await requests(token, 1, true);
    await requests(token, 1, false);
    const window = Math.floor(now / 1000);
    const item = async () =>
      (
        await table.db.send(
          new GetCommand({ TableName: table.tableName, Key: { pk: `APIKEY#${key.hash}`, sk: 'APIKEY' } }),
        )
      ).Item ?? {};
    expect(await item()).toMatchObject({ [`cc${window}`]: 1, [`rc${window}`]: 1 });
    now += 5000;
    await requests(token, 1, false);
    await requests(token, 1, false);
    const left = Object.keys(await item()).filter((name) => /^[rc]c\d+$/.test(name));
    expect(left).toEqual([`rc${window + 5}`]);
  });
});
