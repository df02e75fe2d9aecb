import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from '../../local/lambda-context.js';

const fixture = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as T;

/** An API Gateway HTTP API (payload 2.0) event, cloned from the fixture and adjusted. */
export function httpEvent(options: {
  method: string;
  path: string;
  routeKey?: string;
  token?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
}): APIGatewayProxyEventV2 {
  const event = fixture<APIGatewayProxyEventV2>('apigw-http-v2-event.json');
  event.routeKey = options.routeKey ?? `${options.method} ${options.path}`;
  event.rawPath = options.path;
  event.requestContext.http.method = options.method;
  event.requestContext.http.path = options.path;
  event.requestContext.routeKey = event.routeKey;
  if (options.token !== null && options.token !== undefined)
    event.headers.authorization = `Bearer ${options.token}`;
  Object.assign(event.headers, options.headers ?? {});
  if (options.body !== undefined) {
    event.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    event.headers['content-type'] ??= 'application/json';
  }
  if (options.query) {
    event.queryStringParameters = options.query;
    event.rawQueryString = new URLSearchParams(options.query).toString();
  }
  if (options.pathParameters) event.pathParameters = options.pathParameters;
  return event;
}

/** A Lambda SQS event with these bodies, cloned from the fixture record. */
export function sqsEvent(bodies: { body: string; receiveCount?: number; messageId?: string }[]): SQSEvent {
  const template = fixture<SQSEvent>('sqs-event.json').Records[0] as SQSRecord;
  return {
    Records: bodies.map((b, i) => ({
      ...structuredClone(template),
      messageId: b.messageId ?? `msg-${i}`,
      body: b.body,
      attributes: { ...template.attributes, ApproximateReceiveCount: String(b.receiveCount ?? 1) },
    })),
  };
}

export const context = (name = 'test') => lambdaContext(name, 10_000);

export const parseBody = (response: { body?: string }) => JSON.parse(response.body ?? 'null');
