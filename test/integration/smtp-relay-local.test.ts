import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayDeps } from '../../functions/smtp-relay/relay.js';
import { startLocalSmtpRelay } from '../../local/smtp-relay.js';
import { localTls } from '../../local/tls.js';

/** npm start's relay ports (local/smtp-relay.ts) follow VIEWER_PORT's rule. */
const deps = {
  log: { info() {}, warn() {}, error() {} },
  clock: { now: () => new Date() },
} as unknown as RelayDeps;
let tls: { key: string; cert: string };
let held: Server;
let heldPort: number;

beforeAll(async () => {
  tls = await localTls(undefined);
  held = createServer();
  heldPort = await new Promise<number>((resolve) =>
    held.listen(0, '127.0.0.1', () => resolve((held.address() as { port: number }).port)),
  );
});
afterAll(() => new Promise((resolve) => held.close(resolve)));

describe("the local relay's ports", () => {
  it('0 picks free ones; a default that is taken is replaced by a free one and said; a chosen one that is taken stops the start', async () => {
    const free = await startLocalSmtpRelay({ tls, deps, port: 0, tlsPort: 0 });
    expect(free.port).toBeGreaterThan(0);
    expect(free.tlsPort).toBeGreaterThan(0);
    expect(free.portTaken).toBeUndefined();
    await free.stop();

    const moved = await startLocalSmtpRelay({ tls, deps, port: heldPort, tlsPort: 0 });
    expect(moved.portTaken).toBe(heldPort);
    expect(moved.port).not.toBe(heldPort);
    await moved.stop();
    const movedTls = await startLocalSmtpRelay({ tls, deps, port: 0, tlsPort: heldPort });
    expect(movedTls.tlsPortTaken).toBe(heldPort);
    await movedTls.stop();

    await expect(
      startLocalSmtpRelay({ tls, deps, port: heldPort, portRequired: true, tlsPort: 0 }),
    ).rejects.toMatchObject({
      code: 'EADDRINUSE',
      port: heldPort,
    });
    await expect(
      startLocalSmtpRelay({ tls, deps, port: 0, tlsPort: heldPort, tlsPortRequired: true }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE', port: heldPort });
  });
});
