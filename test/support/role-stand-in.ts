import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type RecordedCall, transactItemActions } from '../../local/invocation.js';
import { sesAction } from '../../local/ses-stand-in.js';
import { allows, describeRequirement, requirementsOf } from './iam.js';
import type { Statement } from './template.js';

/**
 * AWS as one function's role sees it, for a built function run in a process of its own: a proxy
 * in front of the local emulators (DynamoDB, SQS, SES v2, S3) that forwards each call the role in
 * the synthesized template grants and refuses every other one with AccessDeniedException, in the
 * shape each service answers it (test/support/iam.ts decides, as the grants test does). What a
 * function does on a path no scenario of the local service takes shows here as it would on AWS.
 */

export interface RoleCall {
  call: RecordedCall;
  /** The requirements the role lacks (none: forwarded). */
  missing: string[];
}

/** What the stand-in does with a call before forwarding it: `lose` makes it, then loses its answer. */
export type Intercept = (call: RecordedCall) => Promise<'lose' | undefined> | 'lose' | undefined;

export interface RoleStandInOptions {
  functionName: string;
  /** The role's statements in the synthesized template (test/support/template.ts, policiesOf). */
  statements: Statement[];
  /** How the template names what a call touches (requirementsOf); queue URLs are the emulator's. */
  ids: Parameters<typeof requirementsOf>[1];
  /** The emulators' endpoints. */
  upstream: { dynamodb: string; sqs: string; ses: string; s3: string };
  intercept?: Intercept;
}

export interface RoleStandIn {
  /** The endpoints a function sets (AWS_ENDPOINT_URL_*), all through the stand-in. */
  endpoints: Record<
    'AWS_ENDPOINT_URL_DYNAMODB' | 'AWS_ENDPOINT_URL_SQS' | 'AWS_ENDPOINT_URL_SESV2' | 'AWS_ENDPOINT_URL_S3',
    string
  >;
  /** A queue's URL as the function is given it: on the stand-in (the SDK may send to a queue URL's host). */
  queueUrl(emulatorUrl: string): string;
  /** Every call so far, in order. */
  calls: RoleCall[];
  /** The refused calls, as `service:Operation: what is missing`. */
  denied(): string[];
  stop(): Promise<void>;
}

const ACCOUNT = '123456789012';

const readBody = (stream: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });

const json = (body: Buffer): Record<string, unknown> => {
  try {
    return body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

const notAuthorized = (role: string, action: string, resource: string) =>
  `User: arn:aws:sts::${ACCOUNT}:assumed-role/${role}/${role} is not authorized to perform: ${action} on resource: ${resource} because no identity-based policy allows the ${action} action`;

type Refusal = { status: number; headers: Record<string, string>; body: string };

/**
 * Each service's refusal: DynamoDB's JSON 1.0 (400, `__type` and `Message`), SQS's JSON protocol
 * (its query-compatible code in x-amzn-query-error), SES v2's REST JSON (403, x-amzn-ErrorType),
 * S3's XML.
 */
const REFUSALS: Record<string, (message: string) => Refusal> = {
  DynamoDB: (message) => ({
    status: 400,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message }),
  }),
  SQS: (message) => ({
    status: 403,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': 'AccessDenied;Sender' },
    body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message }),
  }),
  SESv2: (message) => ({
    status: 403,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' },
    body: JSON.stringify({ message }),
  }),
  S3: (message) => ({
    status: 403,
    headers: { 'content-type': 'application/xml' },
    body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`,
  }),
};

/** The call a request makes, as the grants test records one (local/invocation.ts). */
function describeRequest(
  service: string,
  functionName: string,
  req: IncomingMessage,
  body: Buffer,
): RecordedCall | undefined {
  const url = req.url ?? '/';
  const method = req.method ?? 'GET';
  const target = String(req.headers['x-amz-target'] ?? '');
  switch (service) {
    case 'DynamoDB': {
      const input = json(body);
      const items = input.RequestItems as Record<string, unknown> | undefined;
      const tableName = input.TableName ?? (items ? Object.keys(items)[0] : undefined);
      const itemActions = transactItemActions(input);
      return {
        functionName,
        service,
        operation: target.split('.')[1] ?? 'Unknown',
        ...(typeof tableName === 'string' ? { tableName } : {}),
        ...(itemActions ? { itemActions } : {}),
        ...(typeof input.IndexName === 'string' ? { indexName: input.IndexName } : {}),
      };
    }
    case 'SQS': {
      const input = json(body);
      return {
        functionName,
        service,
        operation: target.split('.')[1] ?? 'Unknown',
        ...(typeof input.QueueUrl === 'string' ? { queueUrl: input.QueueUrl } : {}),
      };
    }
    case 'SESv2': {
      const operation = sesAction(method, url, body);
      if (!operation) return undefined;
      const input = json(body);
      const path = decodeURIComponent(url.split('?')[0] ?? '');
      const named = /^\/v2\/email\/configuration-sets\/([^/]+)/.exec(path)?.[1];
      const configurationSetName = named ?? input.ConfigurationSetName;
      return {
        functionName,
        service,
        operation,
        ...(typeof configurationSetName === 'string' ? { configurationSetName } : {}),
        ...(Array.isArray(input.Tags) && input.Tags.length > 0 ? { tagged: true } : {}),
      };
    }
    case 'S3': {
      const [path = '', query = ''] = url.split('?');
      const [bucket, ...key] = path.slice(1).split('/');
      const params = new URLSearchParams(query);
      const upload = params.has('uploadId');
      const operation =
        method === 'GET'
          ? 'GetObject'
          : method === 'HEAD'
            ? 'HeadObject'
            : method === 'PUT'
              ? upload
                ? 'UploadPart'
                : 'PutObject'
              : method === 'POST'
                ? upload
                  ? 'CompleteMultipartUpload'
                  : 'CreateMultipartUpload'
                : upload
                  ? 'AbortMultipartUpload'
                  : 'DeleteObject';
      return { functionName, service, operation, bucket, key: decodeURIComponent(key.join('/')) };
    }
    default:
      return undefined;
  }
}

/** Starts the stand-in for one function's role. */
export async function startRoleStandIn(options: RoleStandInOptions): Promise<RoleStandIn> {
  const calls: RoleCall[] = [];
  const servers: Server[] = [];
  const sqsUpstream = new URL(options.upstream.sqs);
  let sqsOrigin = '';
  // A queue URL on the stand-in ↔ the emulator's.
  const toEmulator = (queueUrl: string) =>
    sqsOrigin && queueUrl.startsWith(sqsOrigin)
      ? `${sqsUpstream.origin}${queueUrl.slice(sqsOrigin.length)}`
      : queueUrl;

  const serve = async (service: string, upstream: string) => {
    const target = new URL(upstream);
    const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
      let body = await readBody(req);
      if (service === 'SQS') {
        const input = json(body);
        if (typeof input.QueueUrl === 'string') {
          input.QueueUrl = toEmulator(input.QueueUrl);
          body = Buffer.from(JSON.stringify(input));
        }
      }
      const call = describeRequest(service, options.functionName, req, body);
      const refuse = (missing: string[], message: string) => {
        calls.push({
          call: call ?? { functionName: options.functionName, service, operation: 'Unknown' },
          missing,
        });
        const refusal = (REFUSALS[service] as (m: string) => Refusal)(message);
        res.writeHead(refusal.status, { ...refusal.headers, 'x-amzn-requestid': 'role-stand-in' });
        res.end(refusal.body);
      };
      if (!call)
        return refuse([`${service} ${req.method} ${req.url}`], 'an action this stand-in cannot name');
      let missing: string[];
      try {
        missing = requirementsOf(call, options.ids)
          .filter((requirement) => !allows(options.statements, requirement))
          .map(describeRequirement);
      } catch (error) {
        missing = [String(error)];
      }
      if (missing.length) {
        const [first = ''] = missing;
        const [action = '', ...resource] = first.split(' on ');
        return refuse(missing, notAuthorized(options.functionName, action, resource.join(' on ')));
      }
      calls.push({ call, missing: [] });
      const lose = (await options.intercept?.(call)) === 'lose';
      const upstreamReq = request(
        {
          host:
            target.hostname === 'localhost' || target.hostname.endsWith('.localhost')
              ? '127.0.0.1'
              : target.hostname,
          port: target.port,
          method: req.method,
          path: `${target.pathname.replace(/\/$/, '')}${req.url ?? '/'}`,
          headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
        },
        async (answer) => {
          const answered = await readBody(answer);
          // Made, and its answer lost on the way back: the connection drops.
          if (lose) return res.socket?.destroy();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(answered);
        },
      );
      upstreamReq.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `emulator unreachable: ${error.message}` }));
      });
      upstreamReq.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return (server.address() as AddressInfo).port;
  };

  const [dynamodb, sqs, ses, s3] = await Promise.all([
    serve('DynamoDB', options.upstream.dynamodb),
    serve('SQS', options.upstream.sqs),
    serve('SESv2', options.upstream.ses),
    serve('S3', options.upstream.s3),
  ]);
  // As fauxqs names its queues (sqs.<region>.localhost), which the runner resolves to 127.0.0.1.
  sqsOrigin = `http://sqs.us-east-1.localhost:${sqs}`;
  return {
    endpoints: {
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${dynamodb}`,
      AWS_ENDPOINT_URL_SQS: sqsOrigin,
      AWS_ENDPOINT_URL_SESV2: `http://127.0.0.1:${ses}`,
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${s3}`,
    },
    queueUrl: (emulatorUrl) => {
      const url = new URL(emulatorUrl);
      return `${sqsOrigin}${url.pathname}`;
    },
    calls,
    denied: () =>
      calls
        .filter((c) => c.missing.length)
        .map((c) => `${c.call.service}:${c.call.operation}: ${c.missing.join(', ')}`),
    stop: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
    },
  };
}

/**
 * A function's environment as its template gives it (`Environment.Variables`), each reference
 * resolved by `resolve` (a logical id to its local value; undefined fails), plus what Lambda sets.
 */
export function templateEnvironment(
  variables: Record<string, unknown>,
  resolve: (logicalId: string) => string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value === 'string') {
      env[name] = value;
      continue;
    }
    const ref = (value as { Ref?: string }).Ref;
    const resolved = ref === undefined ? undefined : resolve(ref);
    if (resolved === undefined) throw new Error(`${name}: no local value for ${JSON.stringify(value)}`);
    env[name] = resolved;
  }
  return env;
}

const RUNNER = fileURLToPath(new URL('./bundle-runner.mjs', import.meta.url));
let events = 0;

/**
 * A built function invoked once in a fresh Node process, as Lambda invokes it, with only this
 * environment (no variable of the test's process reaches it): its result, and what it logged.
 */
export async function invokeBuilt(
  outdir: string,
  functionName: string,
  event: unknown,
  env: Record<string, string>,
): Promise<{ result: { statusCode?: number; body?: string } & Record<string, unknown>; output: string[] }> {
  const file = join(outdir, `.event-${process.pid}-${++events}.json`);
  writeFileSync(file, JSON.stringify(event));
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [RUNNER, outdir, file, functionName],
    {
      env: {
        ...env,
        AWS_LAMBDA_FUNCTION_NAME: functionName,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        BUNDLE_RUNNER_RECORD: 'false',
      },
      timeout: 30_000,
    },
  );
  const output = stdout.trim().split('\n');
  const logged = [...output.slice(0, -1), ...stderr.split('\n').filter(Boolean)];
  return { result: JSON.parse(output.at(-1) as string).result, output: logged };
}
