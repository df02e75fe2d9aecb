import type { RelayDeps } from '../functions/smtp-relay/relay.js';
import { type ListenerKind, type Relay, startRelay } from '../functions/smtp-relay/relay.js';
import { LOCAL_PORTS } from '../functions/smtp-relay/settings.js';
import { smtpRelayDeps } from '../functions/wiring/smtp-relay.js';
import { runAs } from './invocation.js';

/**
 * The SMTP relay on this machine (`npm start`; issue 42): the same relay as the container's on AWS
 * (functions/smtp-relay/), on 127.0.0.1, STARTTLS on SMTP_RELAY_PORT and implicit TLS on
 * SMTP_RELAY_TLS_PORT, with the local certificate. Each port follows VIEWER_PORT's rule: 0 picks a
 * free one; a chosen port that is taken stops the start (the error carries the port); the default
 * taken, another is used and `…Taken` says which was. Its calls to the stand-ins are made as the
 * relay (SMTP_RELAY_FUNCTION), so they are answered as AWS answers its role, and its request-log lines
 * reach the writer as its log group's would.
 */

/** The name the relay's calls are made under locally (local/caller-identity.ts: send-email's role, which is its). */
export const SMTP_RELAY_FUNCTION = 'smtp-relay';

export interface LocalSmtpRelayOptions {
  tls: { key: string; cert: string };
  /** STARTTLS. 0: any free port. @default 2587 */
  port?: number;
  portRequired?: boolean;
  /** Implicit TLS. 0: any free port. @default 2465 */
  tlsPort?: number;
  tlsPortRequired?: boolean;
  /** The relay's dependencies. @default smtpRelayDeps(), from the environment the local service set */
  deps?: RelayDeps;
}

export interface LocalSmtpRelay {
  host: string;
  port: number;
  tlsPort: number;
  /** Set when the default STARTTLS port was taken and another was used. */
  portTaken?: number;
  tlsPortTaken?: number;
  relay: Relay;
  stop(): Promise<void>;
}

/** Every call of the relay's, made as the relay. */
function asRelay(deps: RelayDeps): RelayDeps {
  const run = <T>(work: () => T) => runAs(SMTP_RELAY_FUNCTION, work);
  const requestLog = deps.requestLog;
  return {
    ...deps,
    accept: (request) => run(() => deps.accept(request)),
    findKey: (token) => run(() => deps.findKey(token)),
    admit: (key, nowMs) => run(() => deps.admit(key, nowMs)),
    assertSenderDomain: (domain) => run(() => deps.assertSenderDomain(domain)),
    ...(requestLog ? { requestLog: { write: (line: string) => run(() => requestLog.write(line)) } } : {}),
  };
}

export async function startLocalSmtpRelay(options: LocalSmtpRelayOptions): Promise<LocalSmtpRelay> {
  const deps = asRelay(options.deps ?? smtpRelayDeps());
  const wanted: Record<'starttls' | 'implicit', { port: number; required: boolean; taken?: number }> = {
    starttls: { port: options.port ?? LOCAL_PORTS.starttls, required: options.portRequired === true },
    implicit: {
      port: options.tlsPort ?? LOCAL_PORTS.implicitTls,
      required: options.tlsPortRequired === true,
    },
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const relay = await startRelay(deps, {
        hostname: 'localhost',
        tls: options.tls,
        listeners: [
          { kind: 'starttls', port: wanted.starttls.port },
          { kind: 'implicit', port: wanted.implicit.port },
        ],
      });
      return {
        host: '127.0.0.1',
        port: relay.ports.starttls as number,
        tlsPort: relay.ports.implicit as number,
        ...(wanted.starttls.taken === undefined ? {} : { portTaken: wanted.starttls.taken }),
        ...(wanted.implicit.taken === undefined ? {} : { tlsPortTaken: wanted.implicit.taken }),
        relay,
        stop: () => relay.close(),
      };
    } catch (error) {
      const { code, kind } = error as NodeJS.ErrnoException & { kind?: ListenerKind };
      const listener = kind === 'starttls' || kind === 'implicit' ? wanted[kind] : undefined;
      if (code !== 'EADDRINUSE' || !listener || listener.required || listener.port === 0 || attempt > 2)
        throw error;
      listener.taken = listener.port;
      listener.port = 0;
    }
  }
}
