import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { buildApp, interceptLocalhostDns } from 'fauxqs';
import { missingObjectStatus } from '../functions/catalog.js';
import { CALLER_HEADER } from './caller-identity.js';
import { applyDynamoParity } from './dynamo-parity.js';
import { chance, type LocalFaults } from './faults.js';
import { serveMailbox } from './mailbox-page.js';
import { fauxqsStores } from './s3-store.js';
import type { LocalSes, SesStandInSettings } from './ses-stand-in.js';
import { enforceInFlightLimit, maxInFlightOf } from './sqs-in-flight.js';
import { startPartThread } from './threads.js';

const require = createRequire(import.meta.url);

export interface Emulators {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** The SES v2 emulator itself (the sent-mail page at `/`, local/mailbox-page.ts; sent mail as JSON at `/store`). */
  sesEndpoint: string;
  /** S3 (fauxqs, path-style), with the content bucket. */
  s3Endpoint: string;
  /** Set when the viewer port asked for was taken and another was used instead. */
  viewerPortTaken?: number;
  /** Requests each emulator received, by service and operation (e.g. `dynamodb:PutItem`), for the benchmark. */
  calls(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

export interface EmulatorOptions {
  dataDir?: string;
  /** The viewer's port; 0: any free port. */
  sesPort?: number;
  /** The viewer port was chosen by the user (VIEWER_PORT): fail when it is taken instead of using another. */
  sesPortRequired?: boolean;
  faults?: Pick<LocalFaults, 'dynamodb'>;
  /** Buckets to create in the S3 emulator. */
  buckets?: string[];
  /** Where S3 objects are kept across restarts; none: in memory. */
  s3Dir?: string;
  /** Most messages in flight on one queue (sqs-in-flight.ts). @default LOCAL_SQS_MAX_IN_FLIGHT, or 120,000 */
  sqsMaxInFlight?: number;
}

/**
 * The emulators on a thread of their own (emulator-thread.ts): their request handling (dynalite's
 * above all) runs on another core than the functions and their SDK clients. This thread still
 * resolves fauxqs's *.localhost queue hosts to 127.0.0.1 for its own clients.
 */
export async function startEmulatorsThread(
  options: EmulatorOptions,
): Promise<Emulators & { startSes(settings: SesStandInSettings): Promise<LocalSes> }> {
  const thread = await startPartThread<Omit<Emulators, 'calls' | 'stop'>>(
    new URL('./emulator-thread.ts', import.meta.url),
    options,
  );
  const restoreDns = interceptLocalhostDns();
  return {
    ...thread.started,
    calls: () => thread.call('calls'),
    /** The local SES, on the emulators' thread too (it publishes SES's events: SES's work). */
    async startSes(settings) {
      const { endpoint, trackingUrl } = await thread.call<{ endpoint: string; trackingUrl: string }>(
        'startSes',
        settings,
      );
      return {
        endpoint,
        trackingUrl,
        setSendingPaused: (paused) => thread.call('sesSendingPaused', paused),
        acceptsRecipient: (address) => thread.call('sesAcceptsRecipient', address),
        republish: (emailIds) => thread.call('sesRepublish', [...emailIds]),
        idle: () => thread.call('sesIdle'),
        busy: () => thread.call('sesBusy'),
        // Stopped with the thread.
        stop: async () => undefined,
      };
    },
    async stop() {
      await thread.stop();
      restoreDns();
    },
  };
}

/**
 * S3 answers a read of a missing object with 404 NoSuchKey only to a caller that may list the
 * bucket; to one without s3:ListBucket it answers 403 AccessDenied. fauxqs answers 404 to all, so
 * this turns its 404 into S3's 403 for every caller whose role lacks it: a function named by the
 * caller header (local/caller-identity.ts; its role is its catalog entry), or a presigned link
 * (signed by one of the functions). Requests with neither are an administrator's, as in the tests.
 */
function answerAsTheCallersRole(app: ReturnType<typeof buildApp>) {
  app.addHook(
    'onSend',
    (
      request: { method: string; url: string; headers: Record<string, string | string[] | undefined> },
      reply: { statusCode: number; code(status: number): unknown },
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ) => {
      const read = request.method === 'GET' || request.method === 'HEAD';
      const noSuchKey =
        reply.statusCode === 404 &&
        (request.method === 'HEAD' ||
          (typeof payload === 'string' && payload.includes('<Code>NoSuchKey</Code>')));
      if (!read || !noSuchKey || request.headers['x-amz-target']) return done(null, payload);
      const caller = request.headers[CALLER_HEADER];
      // Download links are presigned by the attachment routes, with their role.
      const presigned = /[?&]X-Amz-Signature=/.test(request.url);
      const status = missingObjectStatus(
        typeof caller === 'string' ? caller : presigned ? 'get-attachment' : undefined,
      );
      if (status === 404) return done(null, payload);
      reply.code(403);
      done(
        null,
        request.method === 'HEAD'
          ? ''
          : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>${randomUUID().replaceAll('-', '').slice(0, 16).toUpperCase()}</RequestId><HostId>local</HostId></Error>`,
      );
    },
  );
}

/**
 * The embedded AWS stand-ins, all in this thread, bound to 127.0.0.1 on free ports:
 * dynalite (DynamoDB; on disk under `dataDir`, or in memory), fauxqs (SQS) and aws-ses-v2-local (SES v2).
 * Versions are pinned in package.json; see shared notes on local emulators for their gaps.
 */
export async function startEmulators(options: EmulatorOptions): Promise<Emulators> {
  applyDynamoParity();
  const dynalite = require('dynalite') as (opts: Record<string, unknown>) => Server;
  const dynamo = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const calls: Record<string, number> = {};
  const operationOf = (req: IncomingMessage) => {
    const target = req.headers['x-amz-target'];
    return typeof target === 'string' ? target.slice(target.indexOf('.') + 1) : `${req.method} ${req.url}`;
  };
  const count = (service: string) => (req: IncomingMessage) => {
    const key = `${service}:${operationOf(req)}`;
    calls[key] = (calls[key] ?? 0) + 1;
  };
  const countS3 = (req: IncomingMessage) => {
    const query = req.url?.includes('uploadId') ? ' (multipart)' : '';
    const key = `s3:${req.method}${query}`;
    calls[key] = (calls[key] ?? 0) + 1;
  };
  // Throttling, as DynamoDB answers it (the SDK retries it with backoff, as on AWS); never the table's own setup.
  const throttle = options.faults?.dynamodb?.throttle;
  const [serve] = dynamo.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  dynamo.removeAllListeners('request');
  dynamo.on('request', (req: IncomingMessage, res: ServerResponse) => {
    count('dynamodb')(req);
    if (chance(throttle) && !/Table/.test(operationOf(req))) {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          message: 'The level of configured provisioned throughput for the table was exceeded.',
        }),
      );
      return;
    }
    serve?.call(dynamo, req, res);
  });
  const dynamoPort = await listen(dynamo);

  // fauxqs names queues http://sqs.<region>.localhost:<port>/…, and the SDK sends each SQS call
  // to its queue URL's host: fauxqs's own helper resolves *.localhost to 127.0.0.1 in this process.
  const restoreDns = interceptLocalhostDns();
  // The same fauxqs app serves S3 (path-style) on the same port, its objects kept under s3Dir.
  const stores = await fauxqsStores(options.s3Dir, options.buckets ?? []);
  const sqs = buildApp({ logger: false, host: 'localhost', stores: stores as never });
  answerAsTheCallersRole(sqs);
  enforceInFlightLimit(sqs as never, stores.sqsStore as never, options.sqsMaxInFlight ?? maxInFlightOf());
  await sqs.listen({ host: '127.0.0.1', port: 0 });
  const sqsPort = (sqs.server.address() as AddressInfo).port;
  // SQS calls are POSTs to / (the JSON protocol); anything else is S3, counted by method.
  sqs.server.on('request', (req: IncomingMessage) =>
    req.headers['x-amz-target'] ? count('sqs')(req) : countS3(req),
  );

  const sesServer = (
    require('aws-ses-v2-local') as { default: (c: { host: string; port: number }) => Promise<Server> }
  ).default;
  // Express 5 reports a busy port by calling back without an address.
  let ses = await sesServer({ host: '127.0.0.1', port: options.sesPort ?? 0 });
  let viewerPortTaken: number | undefined;
  if (!ses.address()) {
    if (options.sesPortRequired) {
      await Promise.all([sqs.close(), close(dynamo)]);
      restoreDns();
      throw Object.assign(new Error(`Port ${options.sesPort} is in use`), {
        code: 'EADDRINUSE',
        port: options.sesPort,
      });
    }
    viewerPortTaken = options.sesPort;
    ses = await sesServer({ host: '127.0.0.1', port: 0 });
  }
  const sesPort = (ses.address() as AddressInfo).port;
  // Our page at `/`, the emulator's routes behind it (mailbox-page.ts).
  serveMailbox(ses);
  ses.on('request', count('ses'));

  return {
    dynamodbEndpoint: `http://127.0.0.1:${dynamoPort}`,
    sqsEndpoint: `http://127.0.0.1:${sqsPort}`,
    sesEndpoint: `http://127.0.0.1:${sesPort}`,
    s3Endpoint: `http://127.0.0.1:${sqsPort}`,
    ...(viewerPortTaken === undefined ? {} : { viewerPortTaken }),
    calls: async () => ({ ...calls }),
    async stop() {
      ses.closeAllConnections?.();
      await Promise.all([close(ses), sqs.close(), close(dynamo)]);
      restoreDns();
    },
  };
}
