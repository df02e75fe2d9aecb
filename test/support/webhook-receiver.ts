import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  status: number;
  /** When it arrived (performance.now()). */
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1 (a free port): records every request and answers with the next
 * status of `statuses` (then 200 for ever), as a user's endpoint that fails first would.
 */
export async function startReceiver(statuses: number[] = []) {
  const received: Received[] = [];
  const queue = [...statuses];
  /** While set, every request is answered with it (an endpoint that is down). */
  let down: number | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = down ?? queue.shift() ?? 200;
      received.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        status,
        at: performance.now(),
      });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** The parsed bodies answered with a 2xx. */
    accepted: () => received.filter((r) => r.status < 300).map((r) => JSON.parse(r.body)),
    /** Answer the next requests with these statuses. */
    failNext: (...next: number[]) => queue.push(...next),
    /** Answer every request with `status` until called again without one. */
    setDown: (status?: number) => {
      down = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
