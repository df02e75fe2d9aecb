/**
 * The look at a tracking host before it goes into a configuration set: real HTTPS servers on this
 * machine with certificates made here (right, for another name, expired, self-signed), the names
 * resolved to them by a stand-in resolver, and the same guard as webhooks against private,
 * loopback, link-local and metadata addresses. Also the local twin of the front, as `npm start`
 * wires it.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolve } from '../../functions/adapters/http/guarded-lookup.js';
import { HttpsTrackingFront } from '../../functions/adapters/http/tracking-front.js';
import { checkDomainsDeps } from '../../functions/wiring.js';
import { certificateFor, localCertificateAuthority } from '../../local/tls.js';
import { type LocalTrackingFront, startLocalTrackingFront } from '../../local/tracking-front.js';

const HOST = 'links.acme.test';
const DAY = 24 * 3600 * 1000;
const to =
  (address: string): Resolve =>
  async () => [{ address, family: address.includes(':') ? 6 : 4 }];
const loopback = to('127.0.0.1');

let ca: { key: string; cert: string };
const servers: (Server | HttpServer)[] = [];
let connections = 0;
const serve = async (pems: { key: string; cert: string }) => {
  const server = createServer(pems, (_req, res) => {
    res.writeHead(404);
    res.end('unknown path');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
};
const ports: Record<'right' | 'wrongName' | 'expired' | 'selfSigned', number> = {
  right: 0,
  wrongName: 0,
  expired: 0,
  selfSigned: 0,
};
let origin: HttpServer;
let front: LocalTrackingFront;

beforeAll(async () => {
  ca = await localCertificateAuthority();
  const [right, wrongName, expired, selfSigned] = await Promise.all([
    certificateFor(HOST, ca),
    certificateFor('other.acme.test', ca),
    certificateFor(HOST, ca, {
      notBefore: new Date(Date.now() - 100 * DAY),
      notAfter: new Date(Date.now() - DAY),
    }),
    certificateFor(HOST),
  ]);
  ports.right = await serve(right);
  ports.wrongName = await serve(wrongName);
  ports.expired = await serve(expired);
  ports.selfSigned = await serve(selfSigned);
  origin = createHttpServer((_req, res) => {
    res.writeHead(404);
    res.end('Not found');
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  servers.push(origin);
  front = await startLocalTrackingFront({
    origin: `http://127.0.0.1:${(origin.address() as AddressInfo).port}`,
  });
});
afterAll(async () => {
  await front?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/** The check of HOST at a port, trusting the test's CA (null: Node's own CAs, as on AWS). */
const check = (
  port: number,
  options: { ca?: string | null; resolve?: Resolve; allowLoopback?: boolean } = {},
) => {
  const trusted = options.ca === undefined ? ca.cert : options.ca;
  return new HttpsTrackingFront(
    { allowLoopback: options.allowLoopback ?? true },
    { port, resolve: options.resolve ?? loopback, timeoutMs: 2_000, ...(trusted ? { ca: trusted } : {}) },
  ).problem(HOST);
};

describe('a tracking host is served only with a valid certificate for its name', () => {
  it('passes with a certificate for the host from a trusted authority (any HTTP answer will do)', async () => {
    expect(await check(ports.right)).toBeUndefined();
  });

  it('fails with a certificate for another name', async () => {
    expect(await check(ports.wrongName)).toMatch(/not valid for this name \(ERR_TLS_CERT_ALTNAME_INVALID\)/);
  });

  it('fails with an expired certificate', async () => {
    expect(await check(ports.expired)).toMatch(/has expired \(CERT_HAS_EXPIRED\)/);
  });

  it('fails with a self-signed certificate, and with one from an authority Node does not trust', async () => {
    expect(await check(ports.selfSigned)).toMatch(/self-signed/);
    // Node's own CAs (as on AWS): the local authority is not one of them.
    expect(await check(ports.right, { ca: null })).toMatch(/not trusted|cannot be verified/);
  });

  it('fails when nothing answers', async () => {
    const closed = await serve(await certificateFor(HOST, ca));
    const server = servers.pop() as Server;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await check(closed)).toMatch(/nothing answers on its HTTPS port/);
  });
});

describe('a call on the user behalf: guarded as webhooks are', () => {
  it('refuses a host that resolves to loopback, private, link-local or metadata addresses, without connecting', async () => {
    const before = connections;
    for (const address of ['127.0.0.1', '10.1.2.3', '192.168.0.10', '169.254.169.254', 'fd00::1', '::1'])
      expect(await check(ports.right, { allowLoopback: false, resolve: to(address) }), address).toMatch(
        /is refused: links\.acme\.test resolves to/,
      );
    expect(connections).toBe(before);
  });
});

describe('the local twin of the front', () => {
  it('passes the same check for any tracking host, wired as npm start wires it (its CA, its port)', async () => {
    const port = Number(new URL(front.url).port);
    expect(await check(port, { ca: front.ca })).toBeUndefined();
    expect(
      await new HttpsTrackingFront(
        { allowLoopback: true },
        { port, resolve: loopback, ca: front.ca },
      ).problem('links.other.test'),
    ).toBeUndefined();
    // Its certificates are its CA's own: Node's CAs do not take them.
    expect(await check(port, { ca: null })).toMatch(/not trusted|cannot be verified/);
  });
});

describe("the domain functions' wiring", () => {
  /** The scheduled check's deps, built from this environment as its Lambda's init builds them. */
  const wiredFront = (env: Record<string, string>) => {
    const settings: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'emails',
      WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/webhooks',
      SES_EVENTS_TOPIC_ARN: 'arn:aws:sns:us-east-1:123456789012:events',
      SES_MAX_DELIVERY_SECONDS: '50400',
      DOMAIN_CONFIGURATION_SET_PREFIX: 'EmailService-',
      TRACKING_HTTPS_TARGET: 'd111111abcdef8.cloudfront.net',
      ...env,
    };
    const saved = Object.fromEntries(Object.keys(settings).map((key) => [key, process.env[key]]));
    Object.assign(process.env, settings);
    try {
      return checkDomainsDeps().sending?.front;
    } finally {
      for (const [key, value] of Object.entries(saved))
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
    }
  };

  it("looks at npm start's local front with its CA, and on AWS (no local settings) refuses a loopback host", async () => {
    const local = wiredFront({ LOCAL_TRACKING_FRONT: front.url, LOCAL_TRACKING_FRONT_CA: front.ca });
    expect(await local?.problem(HOST)).toBeUndefined();
    const aws = wiredFront({});
    // localhost resolves to a loopback address: refused before any connection.
    expect(await aws?.problem('localhost')).toMatch(/is refused: localhost resolves to .* loopback address/);
  });
});
