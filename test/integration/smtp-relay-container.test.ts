import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiKey } from '../../functions/api-keys/model.js';
import { decide } from '../../functions/api-keys/rate-limit.js';
import {
  type Container,
  requestLogsToStdout,
  startContainer,
  tlsFromSecret,
} from '../../functions/containers/smtp-relay.js';
import { directRequestLogs, requestLogSink } from '../../functions/observability/request-log-sink.js';
import { proxyV2Header } from '../../functions/smtp-relay/proxy.js';
import type { RelayDeps } from '../../functions/smtp-relay/relay.js';
import { CONTAINER_PORTS, RELAY_METRICS } from '../../functions/smtp-relay/settings.js';
import { localTls } from '../../local/tls.js';
import { plainAuth, smtpTalk } from '../support/smtp.js';

/**
 * The relay's container entry (functions/containers/smtp-relay.ts) as ECS runs it: its settings from
 * the environment, the STARTTLS certificate from its secret (read again on a timer), PROXY v2 on
 * every port, the health check, the connections metric, and a drain on stop.
 */
const TOKEN = 'esk_container_test_0123456789abcdef';
const KEY: ApiKey = {
  id: 'key_c',
  name: 'container key',
  permission: 'full_access',
  hash: 'h',
  created_at: '',
};
const logs: { message: string; fields?: Record<string, unknown> }[] = [];
const record = (message: string, fields?: Record<string, unknown>) => logs.push({ message, fields });
const deps: RelayDeps = {
  accept: async () => ({ id: 'em_c', status: 'queued', created_at: '' }),
  findKey: async (token) => (token === TOKEN ? KEY : null),
  admit: async (_key, nowMs) => decide(1, 10, nowMs),
  assertSenderDomain: async () => undefined,
  log: { info: record, warn: record, error: record },
  clock: { now: () => new Date() },
};

let tls: { key: string; cert: string };
let container: Container;
let secretReads = 0;
let badSecret = false;
const metrics: string[] = [];
const ports = { secured: 0, starttls: 0, health: 0 };

beforeAll(async () => {
  tls = await localTls(undefined);
  Object.assign(process.env, {
    SMTP_RELAY_HOSTNAME: 'smtp.container.test',
    // Any free ports (listen on 0): the container says which it got.
    SMTP_RELAY_SECURED_PORT: '0',
    SMTP_RELAY_STARTTLS_PORT: '0',
    SMTP_RELAY_HEALTH_PORT: '0',
    SMTP_RELAY_PROXY_PROTOCOL: 'true',
    SMTP_RELAY_TLS_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:relay-tls',
  });
  container = await startContainer({
    deps,
    log: { info: record, warn: record, error: record },
    readSecret: async () => {
      secretReads++;
      return badSecret
        ? '{"certificate": "-----BEGIN'
        : JSON.stringify({ certificate: tls.cert, privateKey: tls.key });
    },
    metrics: (line) => metrics.push(line),
    metricsIntervalMs: 50,
    reloadIntervalMs: 100,
    host: '127.0.0.1',
  });
  Object.assign(ports, {
    secured: container.relay.ports.secured,
    starttls: container.relay.ports.starttls,
    health: container.healthPort,
  });
});
afterAll(async () => {
  await container?.stop().catch(() => undefined);
});

const proxied = (address: string, port: number) =>
  proxyV2Header({ address, port: 50000 }, { address: '10.0.0.9', port });

describe('the relay container', () => {
  it('takes mail behind PROXY v2 on the secured port and, with its certificate, on the STARTTLS port', async () => {
    expect(Object.keys(container.relay.ports).sort()).toEqual(['secured', 'starttls']);
    const secured = await smtpTalk(ports.secured, { before: proxied('198.51.100.4', 2465) });
    expect(secured.greeting).toMatch(/^220 smtp\.container\.test /);
    await secured.command('EHLO app.test');
    expect(await secured.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^235 /);
    expect(logs.find((l) => l.message === 'smtp login')?.fields?.client_address).toBe('198.51.100.4');
    const starttls = await smtpTalk(ports.starttls, { before: proxied('198.51.100.5', 2587) });
    expect(await starttls.command('EHLO app.test')).toContain('STARTTLS');
    await starttls.starttls(tls.cert);
    await starttls.command('EHLO app.test');
    expect(await starttls.command(`AUTH PLAIN ${plainAuth(TOKEN)}`)).toMatch(/^235 /);
    // Its open connections, as an embedded-metric line.
    await expect
      .poll(() =>
        metrics.map((line) => JSON.parse(line)).find((m) => m[RELAY_METRICS.activeConnections] >= 2),
      )
      .toMatchObject({
        _aws: {
          CloudWatchMetrics: [
            {
              Namespace: RELAY_METRICS.namespace,
              // The dimension the stack's scaling tracks (lib/constructs/smtp-relay.ts): the service's name.
              Dimensions: [['service']],
              Metrics: [{ Name: 'ActiveConnections' }],
            },
          ],
        },
        service: process.env.POWERTOOLS_SERVICE_NAME ?? 'email-service',
      });
    secured.end();
    starttls.end();
  });

  it('reads its certificate again on its timer', async () => {
    const before = secretReads;
    await expect.poll(() => secretReads, { timeout: 5_000 }).toBeGreaterThan(before);
  });

  it('takes ACM’s exported names too, refuses an encrypted key, and never quotes a secret that is no JSON', () => {
    expect(
      tlsFromSecret(JSON.stringify({ Certificate: 'A', PrivateKey: 'K', CertificateChain: 'B' })),
    ).toEqual({
      key: 'K',
      cert: 'A\nB',
    });
    expect(() =>
      tlsFromSecret(
        JSON.stringify({ Certificate: 'A', PrivateKey: '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMII' }),
      ),
    ).toThrow(/encrypted/);
    expect(() => tlsFromSecret('{"privateKey": "-----BEGIN PRIVATE KEY-----\nMIIsecret')).toThrow(
      /^The TLS secret is not JSON$/,
    );
  });

  it('sends its request-log lines to stdout, where its log group’s subscription takes them', () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      requestLogsToStdout();
      requestLogSink.write('{"log_type":"api_request"}');
    } finally {
      write.mockRestore();
      directRequestLogs(undefined);
    }
    expect(written).toEqual(['{"log_type":"api_request"}\n']);
  });

  it('runs without STARTTLS when its certificate cannot be read at start: the secured port serves, the STARTTLS check fails', async () => {
    // The other container's ports are taken; these are any free ones (its env says 0).
    const without = await startContainer({
      deps,
      log: { info: record, warn: record, error: record },
      readSecret: async () => {
        throw new Error('AccessDeniedException');
      },
      certificateRetryMs: 1,
      metrics: () => undefined,
      host: '127.0.0.1',
    });
    const healthPort = without.healthPort;
    try {
      expect(Object.keys(without.relay.ports)).toEqual(['secured']);
      const status = (path: string) => fetch(`http://127.0.0.1:${healthPort}${path}`).then((r) => r.status);
      expect(await status('/health')).toBe(200);
      expect(await status('/health/starttls')).toBe(503);
      expect(logs.some((l) => l.message.includes('runs without STARTTLS'))).toBe(true);
    } finally {
      await without.stop();
    }
  });

  it('takes a certificate with its chain from the secret, and refuses one without a key', () => {
    expect(
      tlsFromSecret(JSON.stringify({ certificate: 'A', privateKey: 'K', certificateChain: 'B' })),
    ).toEqual({
      key: 'K',
      cert: 'A\nB',
    });
    expect(() => tlsFromSecret(JSON.stringify({ certificate: 'A' }))).toThrow(/privateKey/);
  });

  it('keeps its certificate and its sessions when a renewed secret cannot be used, and says so without quoting it', async () => {
    badSecret = true;
    await expect
      .poll(() =>
        logs.find((l) => l.message.startsWith('the relay could not read its TLS certificate again')),
      )
      .toBeTruthy();
    const logged = JSON.stringify(logs.filter((l) => l.message.includes('TLS certificate')));
    expect(logged).not.toContain('BEGIN');
    badSecret = false;
    const starttls = await smtpTalk(ports.starttls, { before: proxied('198.51.100.7', 2587) });
    await starttls.command('EHLO app.test');
    await starttls.starttls(tls.cert);
    starttls.end();
  });

  it('answers health checks that open with a PROXY v2 header (a target group with PROXY protocol sends one), per port', async () => {
    const ask = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(ports.health, '127.0.0.1', () => {
          socket.write(proxied('10.0.0.20', CONTAINER_PORTS.health));
          socket.end(`GET ${path} HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n`);
        });
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString();
        });
        socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
        socket.on('error', reject);
      });
    expect(await ask('/health')).toBe('HTTP/1.1 200 OK');
    expect(await ask('/health/starttls')).toBe('HTTP/1.1 200 OK');
  });

  it('answers its health check 200, then 503 while it drains on stop, with 421 to an idle session', async () => {
    const health = () => fetch(`http://127.0.0.1:${ports.health}/health`).then((r) => r.status);
    expect(await health()).toBe(200);
    const idle = await smtpTalk(ports.secured, { before: proxied('198.51.100.6', 2465) });
    await idle.command('EHLO app.test');
    const stopping = container.stop();
    expect(await idle.reply()).toMatch(/^421 4\.3\.2 /);
    expect(await health()).toBe(503);
    idle.end();
    await stopping;
    await expect(health()).rejects.toThrow();
  });
});
