/**
 * Behind the optional front door (CloudFront + WAF), API Gateway asks the front door's authorizer
 * before every route whether a request came through CloudFront (its secret header). The secret is
 * read from Secrets Manager through the secrets extension's HTTP endpoint (here a stand-in that
 * answers as the extension does), never from the function's environment.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { extensionSecret } from '../../functions/adapters/secrets-manager/extension.js';
import { makeHandler } from '../../functions/handlers/authorize-front-door.js';
import { FRONT_DOOR_CACHE_SECONDS, FRONT_DOOR_HEADER } from '../../functions/http/front-door.js';

const SECRET = '0123456789abcdef0123456789abcdef0123456789abcdef';
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:FrontDoorOriginSecret-AbCdEf';
const TOKEN = 'session-token-of-the-function';

/** The authorizer event API Gateway sends (payload 2.0), cloned from the fixture. */
const event = (header?: string): APIGatewayRequestAuthorizerEventV2 => {
  const parsed = JSON.parse(
    readFileSync(new URL('../fixtures/apigw-http-authorizer-event.json', import.meta.url), 'utf8'),
  ) as APIGatewayRequestAuthorizerEventV2;
  const headers = { ...parsed.headers };
  delete headers[FRONT_DOOR_HEADER];
  if (header !== undefined) headers[FRONT_DOOR_HEADER] = header;
  return { ...parsed, headers, identitySource: header === undefined ? [] : [header] };
};

/** The extension's endpoint: GetSecretValue's answer for the one secret, to the function's token. */
let server: Server;
let port: number;
let secret = SECRET;
let failing = false;
const requests: IncomingMessage[] = [];
beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push(request);
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.headers['x-aws-parameters-secrets-token'] !== TOKEN) {
      response.writeHead(401).end('missing or wrong token');
      return;
    }
    if (failing || url.pathname !== '/secretsmanager/get' || url.searchParams.get('secretId') !== ARN) {
      response.writeHead(failing ? 500 : 400).end('no');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ARN, Name: 'FrontDoorOriginSecret', SecretString: secret, VersionId: 'v1' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requests.length = 0;
  secret = SECRET;
  failing = false;
});

const authorizer = (now = () => 0) =>
  makeHandler({
    readSecret: extensionSecret({ secretId: ARN, port, sessionToken: TOKEN }),
    now,
  });

describe("the front door's authorizer", () => {
  it('passes a request carrying the secret, reading the secret once (from the extension, with the session token)', async () => {
    const authorize = authorizer();
    for (let i = 0; i < 3; i++) expect(await authorize(event(SECRET))).toEqual({ isAuthorized: true });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe(`/secretsmanager/get?secretId=${encodeURIComponent(ARN)}`);
  });

  it('refuses a request without the header or with another value, without reading the secret again for each guess', async () => {
    const authorize = authorizer();
    for (const header of [undefined, '', 'guess', `${SECRET}x`, SECRET.slice(0, -1)])
      expect(await authorize(event(header)), String(header)).toEqual({ isAuthorized: false });
    expect(requests.length).toBeLessThanOrEqual(1);
  });

  it('never passes a request when the secret cannot be read; a later request reads it again', async () => {
    const authorize = authorizer();
    failing = true;
    await expect(authorize(event(SECRET))).rejects.toThrow(/answered 500/);
    failing = false;
    expect(await authorize(event(SECRET))).toEqual({ isAuthorized: true });
  });

  it('takes a changed secret once its copy is older than the cache period, and only then', async () => {
    let now = 0;
    const authorize = authorizer(() => now);
    expect(await authorize(event(SECRET))).toEqual({ isAuthorized: true });
    secret = 'a-new-secret-of-48-characters-0123456789abcdefgh';
    now = FRONT_DOOR_CACHE_SECONDS * 1000 - 1;
    expect(await authorize(event(secret))).toEqual({ isAuthorized: false });
    expect(requests).toHaveLength(1);
    now = FRONT_DOOR_CACHE_SECONDS * 1000;
    expect(await authorize(event(secret))).toEqual({ isAuthorized: true });
    expect(await authorize(event(SECRET))).toEqual({ isAuthorized: false });
    expect(requests).toHaveLength(2);
  });

  it('is wired as deployed: the secret ARN from the environment, the port and token Lambda gives the extension', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      FRONT_DOOR_SECRET_ARN: ARN,
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port),
      AWS_SESSION_TOKEN: TOKEN,
    });
    try {
      const { handler } = await import('../../functions/handlers/authorize-front-door.js');
      expect(await handler(event(SECRET))).toEqual({ isAuthorized: true });
      expect(await handler(event('guess'))).toEqual({ isAuthorized: false });
    } finally {
      process.env = saved;
    }
  });
});
