/**
 * The send client's connections to SES, against a local HTTPS server that answers SendEmail:
 * kept alive within an invocation, closed before the send consumer returns (so none is used
 * again after a Lambda freeze), and a reset before the request was sent (a connection gone stale,
 * a handshake cut) retried as not sent, never taken for an unknown outcome.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newSesSendClient } from '../../functions/adapters/aws-clients.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { IDLE_SOCKET_MS, SesConnections } from '../../functions/adapters/ses/connections.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import {
  makeHandler as makeConsumer,
  unreachedRetrySeconds,
} from '../../functions/handlers/process-send-queue.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { type CounterName, systemClock } from '../../functions/shared/ports.js';
import { localTls } from '../../local/tls.js';
import { sqsEvent } from '../support/events.js';
import { emailContent, RecordingQueue } from '../support/fakes.js';
import { waitFor } from '../support/https.js';
import { startTestTable, type TestTable } from '../support/table.js';

/** A stand-in for SES's SendEmail over TLS, counting connections and what each one carried. */
class FakeSes {
  server!: Server;
  endpoint = '';
  /** TLS connections made. */
  connections = 0;
  open = new Set<Socket>();
  /** Emails received (one per request answered). */
  received = 0;
  /** Connections that were open at the last `freeze()`: a request on one is lost, as after a freeze. */
  stale = new WeakSet<Socket>();
  requestsOnStale = 0;
  /** The next connections to cut before their TLS handshake completes. */
  cutHandshakes = 0;
  cert = '';

  async start() {
    const tls = await localTls();
    this.cert = tls.cert;
    this.server = createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 60_000 }, (req, res) => {
      const socket = req.socket;
      if (this.stale.has(socket)) {
        // The connection's state was lost while the function was frozen: the request goes nowhere.
        this.requestsOnStale++;
        socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => {
        this.received++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ MessageId: `ses-${this.received}` }));
      });
    });
    this.server.on('connection', (raw: Socket) => {
      if (this.cutHandshakes > 0) {
        this.cutHandshakes--;
        raw.destroy();
      }
    });
    this.server.on('secureConnection', (socket: Socket) => {
      this.connections++;
      this.open.add(socket);
      socket.on('close', () => this.open.delete(socket));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.endpoint = `https://localhost:${(this.server.address() as AddressInfo).port}`;
  }

  /** As Lambda freezing the function for a while: every connection open now is gone on the network. */
  freeze() {
    for (const socket of this.open) this.stale.add(socket);
  }

  stop() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }
}

let ses: FakeSes;
let table: TestTable;
let emails: DynamoEmailRepository;
const saved = { ...process.env };
beforeAll(async () => {
  ses = new FakeSes();
  await ses.start();
  table = await startTestTable();
  emails = new DynamoEmailRepository(table.db, table.tableName);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SESV2: ses.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
});
afterAll(async () => {
  process.env = saved;
  await ses.stop();
  await table.stop();
});

let counted: CounterName[];
let queue: RecordingQueue;
let connections: SesConnections;
let mailer: SesMailer;
beforeEach(() => {
  counted = [];
  queue = new RecordingQueue();
  connections = new SesConnections({ connectMs: 2_000, tls: { ca: ses.cert } });
  mailer = new SesMailer(
    newSesSendClient({ connectMs: 2_000, requestMs: 5_000, connections }),
    'set',
    connections,
  );
  ses.cutHandshakes = 0;
});

const consumer = () =>
  makeConsumer({
    emails,
    mailer,
    queue,
    clock: systemClock,
    maxReceiveCount: 5,
    counters: { count: (name) => void counted.push(name) },
  });

async function queued() {
  const id = newEmailId();
  const content = emailContent({ from: 'a@acme.test', to: ['b@example.com'], subject: 'Hi', text: 'Hi' });
  await emails.create({ id, created_at: new Date().toISOString(), content });
  return { id, body: JSON.stringify({ id, content }) };
}

const job = (id: string) => ({ id, content: emailContent({ to: ['b@example.com'] }) });

describe('connections to SES', () => {
  it('are reused within an invocation, and closed when it returns', async () => {
    const before = ses.connections;
    for (let i = 0; i < 3; i++) await mailer.send(job(newEmailId()));
    expect(ses.connections - before).toBe(1);
    mailer.closeIdle();
    await waitFor(
      async () => ses.open.size,
      (open) => open === 0,
    );
    // Through the send consumer: closed as its invocation returns, not IDLE_SOCKET_MS later.
    const { body } = await queued();
    expect((await consumer()(sqsEvent([{ body }]))).batchItemFailures).toEqual([]);
    expect(
      await waitFor(
        async () => ses.open.size,
        (open) => open === 0,
        IDLE_SOCKET_MS / 4,
      ),
    ).toBe(0);
  });

  it('a reset of a connection gone stale while frozen: no email SES never saw becomes an unknown outcome', async () => {
    const first = await queued();
    expect((await consumer()(sqsEvent([{ body: first.body }]))).batchItemFailures).toEqual([]);
    // Frozen between invocations: whatever was open is gone on the network.
    ses.freeze();
    const second = await queued();
    expect((await consumer()(sqsEvent([{ body: second.body }]))).batchItemFailures).toEqual([]);
    expect(ses.requestsOnStale).toBe(0);
    expect(counted).not.toContain('SendOutcomeUnknown');
    expect(await emails.getState(second.id)).toMatchObject({ sent_at: expect.any(String) });
  });

  it('a connection reset before the request was sent is retried at once, on a new connection, as not sent', async () => {
    ses.cutHandshakes = 1;
    const received = ses.received;
    const { id, body } = await queued();
    expect((await consumer()(sqsEvent([{ body }]))).batchItemFailures).toEqual([]);
    expect(ses.received - received).toBe(1);
    expect(counted).not.toContain('SendOutcomeUnknown');
    expect(await emails.getState(id)).toMatchObject({ sent_at: expect.any(String) });
  });

  it('when no connection can be made, the email goes back as a new message within seconds, not left in flight', async () => {
    ses.cutHandshakes = 2;
    const { id, body } = await queued();
    const result = await consumer()(sqsEvent([{ body, messageId: 'm1' }]));
    // Not kept in flight for the visibility timeout: deleted, and a new message, delayed, carries it.
    expect(result.batchItemFailures).toEqual([]);
    expect(queue.jobs).toEqual([
      expect.objectContaining({ id, attempts: 1, delaySeconds: unreachedRetrySeconds(1) }),
    ]);
    expect(unreachedRetrySeconds(1)).toBe(5);
    expect(counted).toContain('SendRetried');
    expect(counted).not.toContain('SendOutcomeUnknown');
    // Its attempt was released: the next message sends it.
    expect((await emails.getState(id))?.send_started_at).toBeUndefined();
  });
});
