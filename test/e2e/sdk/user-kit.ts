/**
 * What the user programs under test/e2e/sdk/ share, as a user's own code would have it: the SDK's
 * `{data, error}` unwrapped, a wait for a condition, and a webhook receiver on this machine (plain
 * http on localhost, which the local service allows for development).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Result<T> = { data: T | null; error: unknown };

/** The answer's data, or a throw naming what failed. */
export const must = <T>(result: Result<T>, what: string): T => {
  if (result.error || !result.data) throw new Error(`${what}: ${JSON.stringify(result.error)}`);
  return result.data;
};

/** Reads until `done`, or fails loudly after 30 s with the last value. */
export const until = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
): Promise<T> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

export interface ReceivedHook {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A webhook receiver answering 200 to every POST, at `url` (any path under it is its own). */
export async function startHookReceiver(path = '/hooks') {
  const hooks: ReceivedHook[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hooks.push({
        url: req.url ?? '',
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(receiver.address() as AddressInfo).port}${path}`,
    hooks,
    close: () => receiver.close(),
  };
}
