import { Agent as HttpAgent } from 'node:http';
import { type AgentOptions, Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';

/**
 * The send client's connections to SES: kept alive within an invocation, so a batch's paced sends
 * reuse the connections of the sends before them (as many as its sends overlap, not one a send:
 * at 10,000 emails a second, one a send was 10,000 TLS handshakes a second), never across a
 * Lambda freeze. A kept-alive socket that went stale while the function was frozen fails its next
 * request with a reset that cannot be told from one after SES read the request, which would make
 * an email SES never saw an unknown outcome. So the send consumer closes every idle socket before
 * its invocation returns (`closeIdle`), and an idle socket is closed after IDLE_SOCKET_MS anyway,
 * well under any server's idle timeout.
 *
 * And an error on a connection that never finished its TCP connect and TLS handshake is marked as
 * such (`neverSent`): TLS holds the request until the handshake completes, so SES got none of it,
 * and the email may be sent again at once. The handshake is bounded by the connect time too (the
 * SDK's connection timeout counts only the TCP connect).
 */
export const IDLE_SOCKET_MS = 4_000;

const NEVER_SENT = Symbol('neverSent');

/** Whether the error came from a connection that never got as far as sending the request. */
export const neverSent = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { [NEVER_SENT]?: boolean })[NEVER_SENT] === true;

/**
 * Marks every error the socket emits before it is ready (`secureConnect` for TLS, `connect` for
 * plain HTTP, as the local SES is reached) as never sent, and destroys it if it is not ready
 * within `connectMs`. The socket's error is the one the request (and the SDK) rejects with.
 */
function watch(socket: Socket, ready: 'secureConnect' | 'connect', connectMs: number): Socket {
  let connected = false;
  const timer = setTimeout(() => {
    if (!connected)
      socket.destroy(
        Object.assign(
          new Error(`no connection to SES within ${connectMs} ms (TCP connect and TLS handshake)`),
          {
            code: 'ECONNECTTIMEOUT',
          },
        ),
      );
  }, connectMs);
  timer.unref();
  socket.once(ready, () => {
    connected = true;
    clearTimeout(timer);
  });
  socket.once('close', () => clearTimeout(timer));
  socket.prependListener('error', (error: Error) => {
    if (!connected) Object.defineProperty(error, NEVER_SENT, { value: true });
  });
  return socket;
}

type CreateConnection = (this: unknown, options: unknown, callback?: unknown) => Socket;

export interface SesConnectionsOptions {
  /** Longest wait for a connection (TCP connect and TLS handshake). */
  connectMs: number;
  /** More TLS options (the local runtime's and the tests' certificate authority). */
  tls?: Pick<AgentOptions, 'ca'>;
}

export class SesConnections {
  readonly httpsAgent: HttpsAgent;
  readonly httpAgent: HttpAgent;

  constructor({ connectMs, tls = {} }: SesConnectionsOptions) {
    const keepAlive = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
    const tlsConnect = HttpsAgent.prototype as unknown as { createConnection: CreateConnection };
    const tcpConnect = HttpAgent.prototype as unknown as { createConnection: CreateConnection };
    this.httpsAgent = Object.assign(new HttpsAgent({ ...keepAlive, ...tls }), {
      createConnection(this: HttpsAgent, options: unknown, callback?: unknown) {
        return watch(tlsConnect.createConnection.call(this, options, callback), 'secureConnect', connectMs);
      },
    });
    this.httpAgent = Object.assign(new HttpAgent(keepAlive), {
      createConnection(this: HttpAgent, options: unknown, callback?: unknown) {
        return watch(tcpConnect.createConnection.call(this, options, callback), 'connect', connectMs);
      },
    });
  }

  /** Closes every socket not in use, so none survives a freeze (call before the handler returns). */
  closeIdle(): void {
    for (const agent of [this.httpsAgent, this.httpAgent])
      for (const sockets of Object.values(agent.freeSockets))
        for (const socket of sockets ?? []) socket.destroy();
  }
}
