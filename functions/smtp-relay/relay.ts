import { randomBytes, randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import {
  SMTPServer,
  type SMTPServerDataStream,
  type SMTPServerOptions,
  type SMTPServerSession,
} from 'smtp-server';
import { type ApiKey, assertMaySendFrom } from '../api-keys/model.js';
import type { RateLimitState } from '../api-keys/rate-limit.js';
import type { MimeSendRequest } from '../emails/accept-send.js';
import type { SentEmail } from '../emails/send-email.js';
import { type RequestLogSink, requestLogLine } from '../request-logs/model.js';
import { domainOf } from '../shared/address.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import { type DataBudget, type ListenerKind, openFronts, type RelayListener, readData } from './front.js';
import {
  AuthLimiter,
  abortedOutcome,
  DEFAULT_LIMITS,
  HAS_ENHANCED_CODE,
  isRelayUsername,
  messageSummary,
  type Outcome,
  outcomeOf,
  REPLIES,
  type RelayLimits,
  rateOutcome,
  recipientRefusal,
  replyError,
  requestLogEntry,
  type SmtpReply,
  smtpUserAgent,
  tooLargeOutcome,
} from './session.js';

/**
 * The SMTP relay (issue 42): apps that speak only SMTP send through the same pipeline as the API.
 * A submission server on smtp-server: AUTH PLAIN or LOGIN with the username `resend` and an API
 * key as the password, only over TLS; each message becomes an email through `accept` (emails/
 * accept-send.ts acceptMime), answered 250 only once it is stored. Its rules apart from sockets
 * are in session.ts; its numbers in settings.ts; what it is on AWS in lib/constructs/smtp-relay.ts.
 */

export interface RelayDeps {
  /** acceptMime bound to its deps: the message becomes an email, or an ApiError says why not. */
  accept(request: MimeSendRequest): Promise<SentEmail>;
  /** The key whose token this is (no rate counted), null when there is none. */
  findKey(token: string): Promise<ApiKey | null>;
  /** Counts one message against the key's rate (KeyRateLimiter): where the key stands. */
  admit(key: ApiKey, nowMs: number): Promise<RateLimitState>;
  /** Throws the API's ApiError when this domain may not send (not verified). */
  assertSenderDomain(domain: string): Promise<void>;
  /** Where each message's request-log line goes (the API's sink). None: not logged. */
  requestLog?: RequestLogSink;
  /** False: request-log lines carry no bodies (the stack's requestLogBodies). @default true */
  requestLogBodies?: boolean;
  log: Log;
  clock: Clock;
  counters?: Counters;
}

export type { ListenerKind, RelayListener } from './front.js';

export interface RelayOptions {
  /** The name the relay greets with (the hostname apps are pointed at). */
  hostname: string;
  /** The certificate and key (PEM) for STARTTLS and implicit TLS. */
  tls?: { key: string; cert: string };
  listeners: RelayListener[];
  limits?: Partial<RelayLimits>;
}

export interface Relay {
  /** The port each listener got. */
  ports: Partial<Record<ListenerKind, number>>;
  /** A renewed certificate, for connections from now on (no restart). */
  updateTls(tls: { key: string; cert: string }): void;
  /** The connections open now (the scaling metric). */
  activeConnections(): number;
  /**
   * Stops taking connections, answers 421 to idle sessions and to every new command, lets an open
   * DATA finish and be answered, and resolves once every connection is closed.
   */
  drain(): Promise<void>;
  /** Closes every connection now (421 to each), and the listeners. */
  close(): Promise<void>;
}

/** What the relay keeps of one connection beside smtp-server's session. */
interface Connection {
  id: string;
  address: string;
  socket: Socket;
  openedAt: number;
  refused?: SmtpReply;
  key?: ApiKey;
  ehlo?: string;
  transmission?: string;
  inData: boolean;
  /** An answer is being worked out (accept running): the connection is not idle. */
  busy: boolean;
  messages: number;
  smtp?: SmtpConnectionLike;
  commandTimer?: NodeJS.Timeout;
}

/** What the relay uses of smtp-server's connection object (smtp-server 3.21.6's SMTPConnection). */
interface SmtpConnectionLike {
  id: string;
  send(code: number, data?: string | string[], context?: unknown): void;
  _onCommand(command: Buffer, callback: () => void): void;
  _handlerPending?: boolean;
}

export async function startRelay(deps: RelayDeps, options: RelayOptions): Promise<Relay> {
  const limits: RelayLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const dataBudget: DataBudget = { used: 0, limit: limits.maxBufferedBytes, byAddress: new Map() };
  const authLimiter = new AuthLimiter(limits.maxFailedAuth, limits.failedAuthWindowMs);
  const connections = new Map<string, Connection>();
  const perAddress = new Map<string, number>();
  const sockets = new Set<Socket>();
  let draining = false;
  let tlsContext: SecureContext | undefined = options.tls ? createSecureContext(options.tls) : undefined;
  const now = () => deps.clock.now().getTime();

  const smtpOptions = (kind: ListenerKind): SMTPServerOptions => ({
    name: options.hostname,
    ...(kind === 'secured' ? { secure: true, secured: true } : {}),
    ...(kind === 'implicit' ? { secure: true } : {}),
    ...(options.tls && kind !== 'secured' ? { key: options.tls.key, cert: options.tls.cert } : {}),
    // STARTTLS only where the connection is not TLS already.
    disabledCommands: kind === 'starttls' ? [] : ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    size: limits.maxMessageBytes,
    rejectOversized: true,
    hideENHANCEDSTATUSCODES: false,
    disableReverseLookup: true,
    maxClients: limits.maxConnections,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: 1_000,
    logger: false,
    onConnect: (session, callback) => {
      const connection = connections.get(session.id);
      if (draining) return callback(replyError(REPLIES.shuttingDown));
      if (connection?.refused) return callback(replyError(connection.refused));
      callback();
    },
    onAuth: (auth, session, callback) => {
      const connection = connections.get(session.id);
      authenticate(connection, auth.username, auth.password ?? undefined).then(
        (key) => callback(null, { user: key.id }),
        (error: Error) => callback(error),
      );
    },
    onMailFrom: (address, session, callback) => {
      const connection = connections.get(session.id);
      if (connection) {
        connection.ehlo = session.hostNameAppearsAs || undefined;
        connection.transmission = session.transmissionType;
      }
      mailFrom(connection, address.address).then(
        () => callback(),
        (error: Error) => callback(error),
      );
    },
    onRcptTo: (address, session, callback) => {
      const refusal = recipientRefusal(
        session.envelope.rcptTo.map((r) => r.address),
        address.address,
        limits.maxRecipients,
      );
      callback(refusal ? replyError(refusal) : undefined);
    },
    onData: (stream, session, callback) => {
      const connection = connections.get(session.id);
      message(connection, stream, session).then(
        (answer) => {
          callback(null, answer);
          afterMessage(connection);
        },
        (error: Error) => {
          callback(error);
          afterMessage(connection);
        },
      );
    },
    onClose: (session) => {
      const connection = connections.get(session.id);
      if (!connection) return;
      release(connection);
      if (connection.key || connection.messages)
        deps.log.info('smtp session closed', {
          client_address: connection.address,
          session_id: connection.id,
          ...keyFields(connection.key),
          ehlo: connection.ehlo,
          messages: connection.messages,
          duration_ms: now() - connection.openedAt,
        });
    },
  });

  /** A connection gone: its counts given back (once, from whichever close is seen first). */
  function release(connection: Connection) {
    if (!connections.delete(connection.id)) return;
    clearTimeout(connection.commandTimer);
    sockets.delete(connection.socket);
    const left = (perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) perAddress.set(connection.address, left);
    else perAddress.delete(connection.address);
  }

  const keyFields = (key: ApiKey | undefined) => (key ? { key_id: key.id, key_name: key.name } : {});

  async function authenticate(connection: Connection | undefined, username?: string, password?: string) {
    if (!connection) throw replyError(REPLIES.failed);
    if (draining) throw replyError(REPLIES.shuttingDown);
    const at = now();
    if (authLimiter.blocked(connection.address, at)) throw replyError(REPLIES.tooManyFailures);
    const key = isRelayUsername(username) && password ? await findKey(password) : null;
    if (key) {
      connection.key = key;
      deps.log.info('smtp login', {
        client_address: connection.address,
        session_id: connection.id,
        ...keyFields(key),
      });
      return key;
    }
    const blocked = authLimiter.failed(connection.address, at);
    deps.log.warn('smtp login refused', {
      client_address: connection.address,
      session_id: connection.id,
      username_ok: isRelayUsername(username),
      ...(blocked ? { blocked_for_ms: limits.failedAuthWindowMs } : {}),
    });
    throw replyError(blocked ? REPLIES.tooManyFailures : REPLIES.badKey);
  }

  async function findKey(token: string): Promise<ApiKey | null> {
    try {
      return await deps.findKey(token);
    } catch (error) {
      deps.log.error('smtp key lookup failed', { error });
      throw replyError(REPLIES.authUnavailable);
    }
  }

  /** Writes a message's request-log line (never throws; never the token, never the content). */
  function logMessage(
    connection: Connection | undefined,
    startedAt: number,
    summary: ReturnType<typeof messageSummary>,
    status: number,
    response: unknown,
  ) {
    if (!deps.requestLog) return;
    try {
      const entry = requestLogEntry({
        requestId: randomUUID(),
        atMs: startedAt,
        durationMs: now() - startedAt,
        userAgent: smtpUserAgent(connection?.transmission ?? 'ESMTP', connection?.ehlo),
        apiKey: connection?.key,
        summary,
        status,
        response,
        bodies: deps.requestLogBodies !== false,
      });
      deps.requestLog.write(requestLogLine(entry));
    } catch (error) {
      deps.log.warn('could not write the request log', { error_name: (error as Error)?.name });
    }
  }

  function refuse(
    connection: Connection | undefined,
    startedAt: number,
    summary: ReturnType<typeof messageSummary>,
    outcome: Outcome,
  ): Error {
    logMessage(connection, startedAt, summary, outcome.status, outcome.body);
    deps.log.info('smtp message refused', {
      client_address: connection?.address,
      session_id: connection?.id,
      ...keyFields(connection?.key),
      reply: `${outcome.reply.code} ${outcome.reply.enhanced}`,
      status: outcome.status,
    });
    return replyError(outcome.reply);
  }

  async function mailFrom(connection: Connection | undefined, address: string) {
    const key = connection?.key;
    if (!connection || !key) throw replyError(REPLIES.badKey);
    if (draining) throw replyError(REPLIES.shuttingDown);
    const startedAt = now();
    const summary = messageSummary(undefined, { mailFrom: address, recipients: [] });
    try {
      // One count of the key's rate per message, as the API counts one per request.
      const state = await deps.admit(key, startedAt);
      if (!state.allowed) {
        deps.counters?.count('RateLimited');
        throw refuse(connection, startedAt, summary, rateOutcome(state));
      }
      if (address) {
        const domain = domainOf(address);
        assertMaySendFrom(key, domain);
        await deps.assertSenderDomain(domain);
      }
    } catch (error) {
      if (typeof (error as { responseCode?: unknown }).responseCode === 'number') throw error;
      if (!(error instanceof Error && error.name === 'ApiError'))
        deps.log.error('smtp MAIL FROM failed', { error });
      throw refuse(connection, startedAt, summary, outcomeOf(error));
    }
  }

  async function message(
    connection: Connection | undefined,
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
  ): Promise<string> {
    const startedAt = now();
    const envelope = {
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      recipients: session.envelope.rcptTo.map((r) => r.address),
    };
    if (connection) connection.inData = true;
    const onTimeout = () => connection && sendReply(connection, REPLIES.dataTimeout);
    const read = await readData(stream, limits, onTimeout, dataBudget, connection?.address);
    if (connection) {
      connection.inData = false;
      connection.busy = true;
      connection.messages++;
    }
    if (read === 'busy' || read === 'timeout') {
      const reply = read === 'busy' ? REPLIES.busy : REPLIES.dataTimeout;
      refuse(connection, startedAt, messageSummary(undefined, envelope), abortedOutcome(reply));
      throw replyError(reply);
    }
    if (read === 'too-large') {
      throw refuse(
        connection,
        startedAt,
        messageSummary(undefined, envelope),
        tooLargeOutcome(limits.maxMessageBytes),
      );
    }
    const summary = messageSummary(read, envelope);
    const key = connection?.key;
    if (!connection || !key) throw replyError(REPLIES.badKey);
    try {
      const sent = await deps.accept({ raw: read, envelope, apiKey: key });
      logMessage(connection, startedAt, summary, 200, { id: sent.id });
      deps.log.info('smtp message accepted', {
        client_address: connection.address,
        session_id: connection.id,
        ...keyFields(key),
        email_id: sent.id,
        size: read.byteLength,
        recipients: envelope.recipients.length,
      });
      return `2.0.0 OK ${sent.id}`;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ApiError'))
        deps.log.error('smtp message failed', { error });
      throw refuse(connection, startedAt, summary, outcomeOf(error));
    }
  }

  /** Once a message is answered: shutting down, the connection goes now (its answer was sent). */
  function afterMessage(connection: Connection | undefined) {
    if (!connection) return;
    connection.busy = false;
    if (draining) setImmediate(() => sendReply(connection, REPLIES.shuttingDown));
  }

  function sendReply(connection: Connection, reply: SmtpReply) {
    connection.smtp?.send(reply.code, `${reply.enhanced} ${reply.text}`);
  }

  const servers: Record<ListenerKind, SMTPServer> = {
    starttls: new SMTPServer(smtpOptions('starttls')),
    implicit: new SMTPServer(smtpOptions('implicit')),
    secured: new SMTPServer(smtpOptions('secured')),
  };
  for (const server of Object.values(servers))
    server.on('error', (error: Error & { code?: string }) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE')
        deps.log.warn('smtp connection error', { error_name: error.name, error_message: error.message });
    });

  /** Hands a socket (TLS done when it had to be, the client's address known) to smtp-server. */
  function hand(kind: ListenerKind, socket: Socket, front: Socket, address: string, port: number) {
    const id = BigInt(`0x${randomBytes(10).toString('hex')}`)
      .toString(32)
      .padStart(16, '0');
    const count = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, count);
    const connection: Connection = {
      id,
      address,
      socket: front,
      openedAt: now(),
      inData: false,
      busy: false,
      messages: 0,
      ...(count > limits.maxConnectionsPerAddress ? { refused: REPLIES.tooManyConnections } : {}),
    };
    connections.set(id, connection);
    // STARTTLS takes every listener off the plain socket (smtp-server 3.21.6's upgrade): smtp-server's
    // onClose releases the connection too.
    front.once('close', () => release(connection));
    const server = servers[kind];
    server.connect(socket, { id, remoteAddress: address, remotePort: port });
    const smtp = [...server.connections].at(-1) as unknown as SmtpConnectionLike | undefined;
    if (!smtp || smtp.id !== id) return;
    connection.smtp = smtp;
    // Our answers carry their own enhanced status code (session.ts): sent as they are.
    const send = smtp.send.bind(smtp);
    smtp.send = (code, data, context) =>
      send(code, data, typeof data === 'string' && HAS_ENHANCED_CODE.test(data) ? false : context);
    // Every command: none once shutting down; and each must be complete within the command bound.
    const onCommand = smtp._onCommand.bind(smtp);
    const armCommandTimer = () => {
      clearTimeout(connection.commandTimer);
      connection.commandTimer = setTimeout(() => {
        if (connection.inData || connection.busy || smtp._handlerPending) return armCommandTimer();
        sendReply(connection, REPLIES.commandTimeout);
      }, limits.commandTimeoutMs);
      connection.commandTimer.unref();
    };
    armCommandTimer();
    smtp._onCommand = (command, callback) => {
      armCommandTimer();
      if (draining && !connection.inData) {
        sendReply(connection, REPLIES.shuttingDown);
        return;
      }
      onCommand(command, callback);
    };
  }

  for (const listener of options.listeners)
    if (listener.kind !== 'secured' && !options.tls)
      throw new Error(`the relay's ${listener.kind} listener needs a certificate`);
  const fronts = await openFronts(options.listeners, {
    limits,
    log: deps.log,
    tlsContext: () => tlsContext,
    draining: () => draining,
    sockets,
    hand,
  });
  const stopListening = fronts.stop;
  const allClosed = async () => {
    for (;;) {
      for (const socket of sockets) if (socket.destroyed) sockets.delete(socket);
      if (!sockets.size) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    ports: fronts.ports,
    updateTls(tls) {
      tlsContext = createSecureContext(tls);
      servers.starttls.updateSecureContext({ key: tls.key, cert: tls.cert });
      servers.implicit.updateSecureContext({ key: tls.key, cert: tls.cert });
    },
    activeConnections: () => [...sockets].filter((socket) => !socket.destroyed).length,
    async drain() {
      draining = true;
      const listening = stopListening();
      // Sockets not yet in a session (a PROXY header or a handshake under way) have nothing to finish.
      const inSession = new Set([...connections.values()].map((c) => c.socket));
      for (const socket of sockets) if (!inSession.has(socket)) socket.destroy();
      for (const connection of connections.values())
        if (!connection.inData && !connection.busy) sendReply(connection, REPLIES.shuttingDown);
      await listening;
      await allClosed();
    },
    async close() {
      draining = true;
      const listening = stopListening();
      for (const connection of connections.values()) sendReply(connection, REPLIES.shuttingDown);
      for (const socket of sockets) socket.destroy();
      await listening;
      await allClosed();
    },
  };
}
