import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SecretsApi } from '../adapters/secrets-manager/secrets-api.js';
import { log } from '../observability/logger.js';
import { loadConfig } from '../shared/config.js';
import type { Log } from '../shared/ports.js';
import { smtpRelayDeps } from '../wiring/smtp-relay.js';
import { type Relay, type RelayDeps, type RelayListener, startRelay } from './relay.js';
import { RELAY_METRICS } from './settings.js';

/**
 * The relay's container entry on AWS (issue 42; lib/constructs/smtp-relay.ts runs it on ECS Fargate
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

/** The STARTTLS certificate's secret (JSON, PEM values) as the relay takes it. */
export function tlsFromSecret(text: string): { key: string; cert: string } {
  const value = JSON.parse(text) as {
    certificate?: unknown;
    privateKey?: unknown;
    certificateChain?: unknown;
  };
  if (typeof value.certificate !== 'string' || typeof value.privateKey !== 'string')
    throw new Error('The TLS secret must be JSON with `certificate` and `privateKey` (PEM)');
  const chain = typeof value.certificateChain === 'string' ? `\n${value.certificateChain}` : '';
  return { key: value.privateKey, cert: `${value.certificate.trim()}${chain}` };
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
  health: Server;
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
  const readSecret = options.readSecret ?? secretsManagerReader();
  const secretArn = config.SMTP_RELAY_TLS_SECRET_ARN;
  const tls = secretArn ? tlsFromSecret(await readSecret(secretArn)) : undefined;
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
          readSecret(secretArn).then(
            (text) => relay.updateTls(tlsFromSecret(text)),
            (error) => logTo.error('the relay could not read its TLS certificate again', { error }),
          );
        },
        options.reloadIntervalMs ?? config.SMTP_RELAY_TLS_RELOAD_SECONDS * 1000,
      )
    : undefined;
  reload?.unref();
  const writeMetric = options.metrics ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const metrics = setInterval(
    () => writeMetric(activeConnectionsMetric(relay.activeConnections(), new Date())),
    options.metricsIntervalMs ?? 60_000,
  );
  metrics.unref();
  const health = createServer((req, res) => {
    const ok = req.url === '/health' && !draining;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'draining');
  });
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
      await new Promise((resolve) => health.close(resolve));
    },
  };
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
