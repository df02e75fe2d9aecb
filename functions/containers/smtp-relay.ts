import { createServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SecretsApi } from '../adapters/secrets-manager/secrets-api.js';
import { log } from '../observability/logger.js';
import { flushMetrics } from '../observability/metrics.js';
import { directRequestLogs } from '../observability/request-log-sink.js';
import { loadConfig } from '../shared/config.js';
import type { Log } from '../shared/ports.js';
import { readProxyV2 } from '../smtp-relay/proxy.js';
import { type Relay, type RelayDeps, type RelayListener, startRelay } from '../smtp-relay/relay.js';
import { RELAY_METRICS } from '../smtp-relay/settings.js';
import { smtpRelayDeps } from '../wiring/smtp-relay.js';

/**
 * The SMTP relay's container entry on AWS (issue 42): the program its image runs, as
 * functions/handlers/ are the Lambdas' entries (lib/constructs/smtp-relay.ts runs it on ECS Fargate
 * behind a Network Load Balancer). It takes mail on the secured port (the NLB's TLS listeners on
 * 465 and 2465 did the TLS) and, when it holds a certificate (SMTP_RELAY_TLS_SECRET_ARN), on the
 * STARTTLS port (587 and 2587 pass through); each connection opens with the NLB's PROXY protocol v2
 * header (SMTP_RELAY_PROXY_PROTOCOL). The certificate is read again every
 * SMTP_RELAY_TLS_RELOAD_SECONDS, so a renewed one is used without a restart. `GET /health` answers
 * 200 while it takes mail and 503 once it drains; SIGTERM (a deploy, a scale-in) drains: no new
 * connection, 421 to every session but those in DATA, which finish and are answered, then exit 0.
 * Every 60 s it logs its open connections as a CloudWatch metric (embedded metric format), which
 * the service's scaling tracks.
 */

/**
 * The STARTTLS certificate's secret (JSON, PEM values) as the relay takes it: `certificate`,
 * `privateKey` and an optional `certificateChain`, or the same names capitalised as ACM's
 * ExportCertificate answers them (`Certificate`, `PrivateKey`, `CertificateChain`; its private key
 * decrypted first: ACM exports it encrypted with the passphrase given).
 */
export function tlsFromSecret(text: string): { key: string; cert: string } {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not the parser's message: it quotes the text, which is a private key.
    throw new Error('The TLS secret is not JSON');
  }
  const field = (name: string) => {
    const found = value[name] ?? value[name.charAt(0).toUpperCase() + name.slice(1)];
    return typeof found === 'string' ? found : undefined;
  };
  const certificate = field('certificate');
  const privateKey = field('privateKey');
  if (!certificate || !privateKey)
    throw new Error('The TLS secret must be JSON with `certificate` and `privateKey` (PEM)');
  if (/ENCRYPTED PRIVATE KEY/.test(privateKey))
    throw new Error("The TLS secret's private key is encrypted (as ACM exports it): store it decrypted");
  const chain = field('certificateChain');
  return { key: privateKey, cert: `${certificate.trim()}${chain ? `\n${chain}` : ''}` };
}

/** What a log may say of an error about the secret: its name and our own words, never the text it read. */
const secretProblem = (error: unknown) => ({
  error_name: error instanceof Error ? error.name : typeof error,
  reason: error instanceof Error && !(error instanceof SyntaxError) ? error.message : undefined,
});

/**
 * A health check server that takes an NLB's PROXY protocol v2 header first when one comes (a
 * target group with PROXY protocol sends it on its health checks too), then plain HTTP.
 */
function healthServer(http: HttpServer): NetServer {
  return createNetServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.setTimeout(10_000, () => socket.destroy());
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      let header: ReturnType<typeof readProxyV2> | undefined;
      try {
        header = readProxyV2(buffered);
      } catch {
        header = undefined; // no PROXY header: the request itself
      }
      if (header && !header.complete) {
        if (buffered.length > 4096) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      const rest = header ? buffered.subarray(header.consumed) : buffered;
      if (rest.length) socket.unshift(rest);
      http.emit('connection', socket);
      socket.resume();
    };
    socket.on('data', onData);
  });
}

/**
 * One embedded-metric-format line: the relay's open connections now (RELAY_METRICS), under the
 * dimension `service` (POWERTOOLS_SERVICE_NAME, the stack's name: lib/constructs/smtp-relay.ts
 * tracks the metric by it, so two stacks in one account scale apart).
 */
export function activeConnectionsMetric(
  count: number,
  at: Date,
  service = process.env.POWERTOOLS_SERVICE_NAME ?? 'email-service',
): string {
  return JSON.stringify({
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [
        {
          Namespace: RELAY_METRICS.namespace,
          Dimensions: [['service']],
          Metrics: [{ Name: RELAY_METRICS.activeConnections, Unit: 'Count' }],
        },
      ],
    },
    service,
    [RELAY_METRICS.activeConnections]: count,
  });
}

export interface Container {
  relay: Relay;
  health: NetServer;
  healthPort: number;
  /** Drains the relay and stops the timers and the health server. */
  stop(): Promise<void>;
}

export async function startContainer(
  options: {
    /** Reads the TLS secret (default: Secrets Manager's GetSecretValue with the task role). */
    readSecret?: (arn: string) => Promise<string>;
    log?: Log;
    /** Where the metric lines go. @default stdout */
    metrics?: (line: string) => void;
    metricsIntervalMs?: number;
    /** The wait between the first reads of the certificate (times the attempt). @default 2000 */
    certificateRetryMs?: number;
    /** How often the certificate is read again. @default SMTP_RELAY_TLS_RELOAD_SECONDS */
    reloadIntervalMs?: number;
    host?: string;
    /** The relay's dependencies. @default smtpRelayDeps(), from the environment */
    deps?: RelayDeps;
  } = {},
): Promise<Container> {
  const logTo = options.log ?? log;
  const config = loadConfig(
    'SMTP_RELAY_HOSTNAME',
    'SMTP_RELAY_STARTTLS_PORT',
    'SMTP_RELAY_SECURED_PORT',
    'SMTP_RELAY_HEALTH_PORT',
    'SMTP_RELAY_PROXY_PROTOCOL',
    'SMTP_RELAY_TLS_SECRET_ARN',
    'SMTP_RELAY_TLS_RELOAD_SECONDS',
  );
  // The relay's request-log lines go to stdout, its log group's subscription takes them to the
  // writer (as an API function's on Lambda, where the sink finds stdout by itself).
  if (!options.deps) requestLogsToStdout();
  const readSecret = options.readSecret ?? secretsManagerReader();
  const secretArn = config.SMTP_RELAY_TLS_SECRET_ARN;
  const tls = secretArn
    ? await firstCertificate(readSecret, secretArn, logTo, options.certificateRetryMs ?? 2_000)
    : undefined;
  const proxyProtocol = config.SMTP_RELAY_PROXY_PROTOCOL === 'true';
  const host = options.host ?? '0.0.0.0';
  const listeners: RelayListener[] = [
    { kind: 'secured', port: config.SMTP_RELAY_SECURED_PORT, host, proxyProtocol },
    ...(tls
      ? [{ kind: 'starttls' as const, port: config.SMTP_RELAY_STARTTLS_PORT, host, proxyProtocol }]
      : []),
  ];
  const relay = await startRelay(
    { ...(options.deps ?? smtpRelayDeps()), log: logTo },
    { hostname: config.SMTP_RELAY_HOSTNAME, ...(tls ? { tls } : {}), listeners },
  );
  let draining = false;
  const reload = secretArn
    ? setInterval(
        () => {
          // A secret that cannot be read or used now leaves the certificate the relay holds.
          readSecret(secretArn)
            .then((text) => relay.updateTls(tlsFromSecret(text)))
            .catch((error) =>
              logTo.error('the relay could not read its TLS certificate again; it keeps the one it has', {
                ...secretProblem(error),
              }),
            );
        },
        options.reloadIntervalMs ?? config.SMTP_RELAY_TLS_RELOAD_SECONDS * 1000,
      )
    : undefined;
  reload?.unref();
  const writeMetric = options.metrics ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const metrics = setInterval(() => {
    writeMetric(activeConnectionsMetric(relay.activeConnections(), new Date()));
    // The send path's own counters (RateLimited, EmailsAccepted…), each minute rather than at 100.
    void flushMetrics().catch(() => undefined);
  }, options.metricsIntervalMs ?? 60_000);
  metrics.unref();
  // `/health` for the secured port's targets; `/health/starttls` for the STARTTLS port's, which
  // fails while the relay holds no certificate, so the NLB sends 587 to no task that cannot serve it.
  const http = createServer((req, res) => {
    const ok =
      !draining &&
      (req.url === '/health' || (req.url === '/health/starttls' && relay.ports.starttls !== undefined));
    res
      .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
      .end(ok ? 'ok' : draining ? 'draining' : 'no');
  });
  const health = healthServer(http);
  const healthPort = await new Promise<number>((resolve, reject) => {
    health.once('error', reject);
    health.listen(config.SMTP_RELAY_HEALTH_PORT, host, () => resolve((health.address() as AddressInfo).port));
  });
  logTo.info('smtp relay listening', { ports: relay.ports, health_port: healthPort, starttls: Boolean(tls) });
  return {
    relay,
    health,
    healthPort,
    async stop() {
      draining = true;
      clearInterval(reload);
      clearInterval(metrics);
      await relay.drain();
      await flushMetrics().catch(() => undefined);
      const closed = new Promise((resolve) => health.close(resolve));
      http.closeAllConnections();
      await closed;
    },
  };
}

/** Sends this process's request-log lines to stdout, off Lambda too (the container's log group). */
export const requestLogsToStdout = () =>
  directRequestLogs({ write: (line) => void process.stdout.write(`${line}\n`) });

/**
 * The STARTTLS certificate at start, tried three times a few seconds apart. One that cannot be read
 * or used leaves the relay without STARTTLS (its health check says so) rather than without its
 * secured port too; a new deployment takes it up once the secret is right.
 */
async function firstCertificate(
  readSecret: (arn: string) => Promise<string>,
  arn: string,
  logTo: Log,
  retryMs: number,
): Promise<{ key: string; cert: string } | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return tlsFromSecret(await readSecret(arn));
    } catch (error) {
      if (attempt >= 3) {
        logTo.error('the relay could not read its TLS certificate: it runs without STARTTLS', {
          ...secretProblem(error),
        });
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, retryMs * attempt));
    }
  }
}

/** GetSecretValue with the task role's credentials (ECS gives them through its credentials endpoint). */
function secretsManagerReader(): (arn: string) => Promise<string> {
  const credentials = defaultProvider();
  return async (arn) => {
    const region = arn.split(':')[3] || process.env.AWS_REGION || 'us-east-1';
    const api = new SecretsApi({ region, credentials: await credentials() });
    return api.getSecretValue(arn);
  };
}

/** Run as the container's command: start, and drain on SIGTERM (ECS's stop), then exit 0. */
export async function main(): Promise<void> {
  const container = await startContainer();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    log.info('smtp relay draining');
    container.stop().then(
      () => process.exit(0),
      (error) => {
        log.error('smtp relay drain failed', { error });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// The bundle of this file is the image's whole program: loaded, it runs (but not in the tests, which
// start it themselves with startContainer).
if (process.env.VITEST === undefined) {
  main().catch((error) => {
    log.error('smtp relay failed to start', { error });
    process.exit(1);
  });
}
