import { type Socket, connect as tcp } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';

/**
 * A bare SMTP client for the relay's tests: one command, one reply (multi-line replies joined),
 * over TCP or TLS, and STARTTLS on the same connection; for what nodemailer will not send (a SIZE
 * that lies, AUTH before TLS, a PROXY header). Each wait fails loudly after `timeoutMs`.
 */
export interface SmtpTalk {
  /** The reply to the greeting (read on connect). */
  greeting: string;
  /** Sends a line (CRLF added) and reads the reply. */
  command(line: string): Promise<string>;
  /** Sends raw bytes without reading a reply. */
  write(bytes: string | Buffer): void;
  /** Reads the next reply. */
  reply(): Promise<string>;
  /** STARTTLS, then the TLS handshake on the same connection. */
  starttls(ca: string): Promise<void>;
  /** Resolves when the server closes the connection. */
  closed(): Promise<void>;
  end(): void;
}

export async function smtpTalk(
  port: number,
  options: { tls?: { ca: string }; before?: Buffer; timeoutMs?: number; host?: string } = {},
): Promise<SmtpTalk> {
  const host = options.host ?? '127.0.0.1';
  const timeoutMs = options.timeoutMs ?? 10_000;
  let socket: Socket | TLSSocket = await new Promise<Socket | TLSSocket>((resolve, reject) => {
    const s: Socket | TLSSocket = options.tls
      ? tlsConnect({ host, port, ca: options.tls.ca, servername: 'localhost' }, () => resolve(s))
      : tcp({ host, port }, () => resolve(s));
    s.once('error', reject);
  });
  let buffer = '';
  let waiting: ((line: string) => void) | undefined;
  let isClosed = false;
  const closeWaiters: (() => void)[] = [];
  const attach = (s: Socket | TLSSocket) => {
    s.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      check();
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      isClosed = true;
      for (const w of closeWaiters.splice(0)) w();
      check();
    });
  };
  const check = () => {
    // A complete reply: lines up to one whose fourth character is a space.
    const lines = buffer.split('\r\n');
    for (let i = 0; i < lines.length - 1; i++) {
      const line = lines[i] as string;
      if (line.length >= 4 && line[3] === ' ') {
        const reply = lines.slice(0, i + 1).join('\n');
        buffer = lines.slice(i + 1).join('\r\n');
        const w = waiting;
        waiting = undefined;
        w?.(reply);
        return;
      }
    }
    if (isClosed && waiting) {
      const w = waiting;
      waiting = undefined;
      w('(closed)');
    }
  };
  const reply = () =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no SMTP reply within ${timeoutMs} ms`)), timeoutMs);
      waiting = (line) => {
        clearTimeout(timer);
        resolve(line);
      };
      check();
    });
  attach(socket);
  if (options.before) socket.write(options.before);
  const greeting = await reply();
  return {
    greeting,
    reply,
    write: (bytes) => void socket.write(bytes),
    command(line) {
      socket.write(`${line}\r\n`);
      return reply();
    },
    async starttls(ca) {
      socket.write('STARTTLS\r\n');
      const ready = await reply();
      if (!ready.startsWith('220')) throw new Error(`STARTTLS refused: ${ready}`);
      const plain = socket as Socket;
      plain.removeAllListeners('data');
      plain.removeAllListeners('close');
      socket = await new Promise<TLSSocket>((resolve, reject) => {
        const s = tlsConnect({ socket: plain, ca, servername: 'localhost' }, () => resolve(s));
        s.once('error', reject);
      });
      attach(socket);
    },
    closed: () => (isClosed ? Promise.resolve() : new Promise<void>((resolve) => closeWaiters.push(resolve))),
    end: () => socket.end(),
  };
}

/** AUTH PLAIN's argument for the relay's username and this password. */
export const plainAuth = (password: string, username = 'resend') =>
  Buffer.from(`\0${username}\0${password}`).toString('base64');
