/**
 * The public routes' handlers (the console's page and files, the API description) invoked as Lambda
 * runs them, with API Gateway v2 events: HSTS on AWS, and the 404 in the error shape for a file
 * that is not built. (Behind the front door, API Gateway's authorizer refuses what did not come
 * through it before any function runs: test/infra/front-door.test.ts.)
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_ASSETS } from '../../functions/console/assets.generated.js';
import { makeHandler as consolePage } from '../../functions/handlers/get-console.js';
import { makeHandler as consoleAsset } from '../../functions/handlers/get-console-asset.js';
import { makeHandler as openApi } from '../../functions/handlers/get-openapi.js';
import type { PublicDeps } from '../../functions/http/public.js';
import { context, httpEvent, parseBody } from '../support/events.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const HSTS = 'max-age=31536000; includeSubDomains';
const script = Object.keys(CONSOLE_ASSETS).find((name) => name.endsWith('.js')) as string;

const call = async (
  make: (deps: PublicDeps) => ReturnType<typeof consolePage>,
  path: string,
  options: { deps?: Partial<PublicDeps>; headers?: Record<string, string>; file?: string } = {},
) =>
  (await make({ log: silent, ...options.deps })(
    httpEvent({
      method: 'GET',
      path,
      routeKey: options.file === undefined ? `GET ${path}` : 'GET /assets/{file}',
      token: null,
      headers: options.headers,
      pathParameters: options.file === undefined ? undefined : { file: options.file },
    }),
    context(),
  )) as APIGatewayProxyStructuredResultV2;

let before: string | undefined;
beforeEach(() => {
  before = process.env.AWS_LAMBDA_FUNCTION_NAME;
  process.env.AWS_LAMBDA_FUNCTION_NAME = 'get-console';
});
afterEach(() => {
  if (before === undefined) delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  else process.env.AWS_LAMBDA_FUNCTION_NAME = before;
});

describe('the public handlers on Lambda', () => {
  it('send HSTS with the console page, its files and the API description', async () => {
    expect(script).toBeDefined();
    const responses = [
      await call(consolePage, '/'),
      await call(consoleAsset, `/assets/${script}`, { file: script }),
      await call(openApi, '/v1/openapi.json'),
    ];
    for (const response of responses) {
      expect(response.statusCode).toBe(200);
      expect(response.headers?.['strict-transport-security']).toBe(HSTS);
      expect(response.headers?.['x-frame-options']).toBe('DENY');
    }
    expect(responses[0]?.headers?.['content-type']).toBe('text/html; charset=utf-8');
    expect(responses[1]?.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answer a file that is not built with a 404 in the error shape', async () => {
    for (const file of ['main-NOPE.js', '../index.html', 'index.html', 'constructor', '__proto__']) {
      const response = await call(consoleAsset, `/assets/${file}`, { file });
      expect(response.statusCode, file).toBe(404);
      expect(parseBody(response)).toEqual({
        statusCode: 404,
        name: 'not_found',
        message: expect.any(String),
      });
    }
  });
});
