import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { SMTPServerDataStream } from 'smtp-server';
import type { Log } from '../shared/ports.js';
import { ProxyHeaderError, readProxyV2 } from './proxy.js';
import type { RelayLimits } from './session.js';

/**
 * The relay's front (relay.ts): its own TCP listeners, which take each connection up to the point
 * smtp-server can have it: the PROXY protocol v2 header read (the client's address), the TLS
 * handshake of an implicit TLS port done, each within the handshake bound.
 */

/**
 * `starttls`: plain TCP, STARTTLS offered (AUTH refused before it). `implicit`: TLS from the first
 * byte. `secured`: plain TCP that something in front (the NLB's TLS listener) has already secured,
 * taken as TLS; only that front may reach it.
 */
export type ListenerKind = 'starttls' | 'implicit' | 'secured';

export interface RelayListener {
  kind: ListenerKind;
  /** 0: any free port. */
  port: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Each connection starts with a PROXY protocol v2 header naming the client (an NLB's target group). */
  proxyProtocol?: boolean;
}

export interface FrontDeps {
  limits: RelayLimits;
  log: Log;
  /** The certificate for implicit TLS, as it is now (renewed without a restart). */
  tlsContext(): SecureContext | undefined;
  draining(): boolean;
  /** Every socket open, from its first byte (the relay's active connections). */
  sockets: Set<Socket>;
  /** Hands a connection on: `socket` to talk on (TLS or not), `front` the TCP socket under it. */
  hand(kind: ListenerKind, socket: Socket, front: Socket, address: string, port: number): void;
}

/** Listens on each listener's port; throws (with the `port` and `kind` that failed) if one is taken. */
export async function openFronts(listeners: RelayListener[], deps: FrontDeps) {
  const fronts: Server[] = [];
  const ports: Partial<Record<ListenerKind, number>> = {};
  try {
    for (const listener of listeners) {
      const front = createServer((socket) => arrive(listener, socket, deps));
      front.on('error', (error) => deps.log.warn('smtp listener error', { error_message: error.message }));
      fronts.push(front);
      ports[listener.kind] = await new Promise<number>((resolve, reject) => {
        front.once('error', reject);
        front.listen(listener.port, listener.host ?? '127.0.0.1', () => {
          front.off('error', reject);
          resolve((front.address() as AddressInfo).port);
        });
      });
    }
  } catch (error) {
    await Promise.all(fronts.map((front) => new Promise((resolve) => front.close(resolve))));
    throw Object.assign(error as Error, {
      port: listeners[fronts.length - 1]?.port,
      kind: listeners[fronts.length - 1]?.kind,
    });
  }
  return {
    ports,
    /** Stops listening (open connections go on). */
    stop: () =>
      Promise.all(
        fronts.splice(0).map((front) => new Promise<void>((resolve) => front.close(() => resolve()))),
      ),
  };
}

/** A connection as it arrives: its PROXY header read, its TLS handshake done, within the bound. */
function arrive(listener: RelayListener, socket: Socket, deps: FrontDeps) {
  deps.sockets.add(socket);
  socket.once('close', () => deps.sockets.delete(socket));
  socket.on('error', () => undefined);
  if (deps.draining()) {
    socket.destroy();
    return;
  }
  const deadline = setTimeout(() => socket.destroy(), deps.limits.handshakeTimeoutMs);
  deadline.unref();
  const ready = (address: string, port: number) => {
    const tlsContext = deps.tlsContext();
    if (listener.kind !== 'implicit' || !tlsContext) {
      clearTimeout(deadline);
      if (listener.kind === 'implicit') return socket.destroy();
      return deps.hand(listener.kind, socket, socket, address, port);
    }
    const secure = new TLSSocket(socket, { isServer: true, secureContext: tlsContext });
    secure.on('error', () => socket.destroy());
    secure.once('secure', () => {
      clearTimeout(deadline);
      deps.hand(listener.kind, secure, socket, address, port);
    });
  };
  const own = () => ready(normalize(socket.remoteAddress ?? ''), socket.remotePort ?? 0);
  if (!listener.proxyProtocol) return own();
  let received = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    try {
      const header = readProxyV2(received);
      if (!header.complete) return;
      socket.off('data', onData);
      socket.pause();
      const rest = received.subarray(header.consumed);
      if (rest.length) socket.unshift(rest);
      if (header.source) ready(normalize(header.source.address), header.source.port);
      else own();
    } catch (error) {
      if (!(error instanceof ProxyHeaderError)) throw error;
      deps.log.warn('smtp connection without a valid PROXY header', {
        peer_address: socket.remoteAddress,
        reason: error.message,
      });
      clearTimeout(deadline);
      socket.destroy();
    }
  };
  socket.on('data', onData);
}

/** An IPv4 client of a dual-stack listener as its IPv4 address (the per-address counts use one form). */
const normalize = (address: string) => address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');

/**
 * The bytes of messages being received that a relay holds at once, all sessions together: a
 * message that would take it past `limit` is read to its end but not kept, and answered 452 4.3.1
 * (try again), so a few 40 MB messages at once cannot run a task out of memory and take every
 * session on it down.
 */
export interface DataBudget {
  used: number;
  limit: number;
  /** What each client address holds now: one address may hold at most `limit / 4`, so no one client fills it. */
  byAddress?: Map<string, number>;
}

/**
 * Reads a DATA stream whole; past the limit, the DATA bound (`onTimeout` then) or the relay's
 * budget of held bytes (`busy`), nothing is kept.
 */
export function readData(
  stream: SMTPServerDataStream,
  bounds: RelayLimits,
  onTimeout: () => void,
  budget: DataBudget = { used: 0, limit: Number.POSITIVE_INFINITY },
  address = '',
) {
  const byAddress = budget.byAddress;
  const share = budget.limit / 4;
  const hold = (bytes: number) => {
    budget.used += bytes;
    if (!byAddress) return;
    const now = (byAddress.get(address) ?? 0) + bytes;
    if (now > 0) byAddress.set(address, now);
    else byAddress.delete(address);
  };
  return new Promise<Buffer | 'too-large' | 'timeout' | 'busy'>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let held = 0;
    let busy = false;
    const drop = () => {
      hold(-held);
      held = 0;
      chunks.length = 0;
    };
    const timer = setTimeout(() => {
      drop();
      resolve('timeout');
      stream.removeAllListeners('data');
      stream.resume();
      onTimeout();
    }, bounds.dataTimeoutMs);
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (busy || bytes > bounds.maxMessageBytes) return drop();
      if (
        budget.used + chunk.length > budget.limit ||
        (byAddress && (byAddress.get(address) ?? 0) + chunk.length > share)
      ) {
        busy = true;
        return drop();
      }
      chunks.push(chunk);
      held += chunk.length;
      hold(chunk.length);
    });
    stream.on('end', () => {
      clearTimeout(timer);
      if (stream.sizeExceeded || bytes > bounds.maxMessageBytes) {
        drop();
        return resolve('too-large');
      }
      if (busy) return resolve('busy');
      const whole = Buffer.concat(chunks);
      drop();
      resolve(whole);
    });
    stream.on('error', (error) => {
      clearTimeout(timer);
      drop();
      reject(error);
    });
  });
}
