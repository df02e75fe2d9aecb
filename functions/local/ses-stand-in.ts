import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SesEvent } from '../adapters/ses/events.js';
import { simulateEvents } from './mailbox-simulator.js';
import { LocalIdentities, type LocalIdentityOptions, type SesReply } from './ses-identities.js';

/**
 * Local SES = the SES v2 emulator plus what it lacks: event publishing and identities. This proxy
 * sits in front of the emulator. It answers the identity API itself (ses-identities.ts) and, as SES
 * does, refuses a SendEmail whose sender's domain is not a verified identity. Every other request
 * passes through unchanged, and for each SendEmail the emulator accepted with a configuration set,
 * it publishes the events SES would (see mailbox-simulator.ts) to the events queue, in the shape
 * SNS raw message delivery puts on SQS on AWS.
 */
export interface SesStandIn {
  endpoint: string;
  /** Resolves once every event scheduled so far has been published. */
  idle(): Promise<void>;
  /** Whether events are scheduled but not yet published. */
  busy(): boolean;
  stop(): Promise<void>;
}

const readBody = (stream: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });

export async function startSesStandIn(options: {
  emulatorEndpoint: string;
  sqs: SQSClient;
  eventsQueueUrl: string;
  /** Delay between sending and the delivery/bounce events. @default 150 */
  eventDelayMs?: number;
  /** How domain identities verify locally (delays, where they are kept). */
  identities?: LocalIdentityOptions;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}): Promise<SesStandIn> {
  const target = new URL(options.emulatorEndpoint);
  const pending = new Set<Promise<void>>();
  const identities = new LocalIdentities(options.identities);
  const reply = (res: ServerResponse, answer: SesReply) => {
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      ...(answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {}),
    });
    res.end(JSON.stringify(answer.body));
  };

  const publish = (event: SesEvent) =>
    options.sqs
      .send(new SendMessageCommand({ QueueUrl: options.eventsQueueUrl, MessageBody: JSON.stringify(event) }))
      .then(() => undefined);

  const schedule = (requestBody: Buffer, responseBody: Buffer) => {
    let sent: { MessageId?: string };
    let req: {
      ConfigurationSetName?: string;
      FromEmailAddress?: string;
      Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
      Content?: { Simple?: { Subject?: { Data?: string } } };
      EmailTags?: { Name: string; Value: string }[];
    };
    try {
      sent = JSON.parse(responseBody.toString('utf8'));
      req = JSON.parse(requestBody.toString('utf8'));
    } catch {
      return;
    }
    // As on AWS: no configuration set, no events.
    if (!sent.MessageId || !req.ConfigurationSetName) return;
    const events = simulateEvents(
      {
        messageId: sent.MessageId,
        from: req.FromEmailAddress ?? '',
        recipients: [
          ...(req.Destination?.ToAddresses ?? []),
          ...(req.Destination?.CcAddresses ?? []),
          ...(req.Destination?.BccAddresses ?? []),
        ],
        subject: req.Content?.Simple?.Subject?.Data ?? '',
        tags: Object.fromEntries((req.EmailTags ?? []).map((t) => [t.Name, [t.Value]])),
        configurationSet: req.ConfigurationSetName,
        sentAt: new Date(),
      },
      options.eventDelayMs,
    );
    for (const { delayMs, event } of events) {
      const job: Promise<void> = new Promise<void>((resolve) => setTimeout(resolve, delayMs))
        .then(() => publish(event))
        .catch((error) => options.log?.('could not publish SES event', { error: String(error) }))
        .finally(() => pending.delete(job));
      pending.add(job);
    }
  };

  const server: Server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const identityReply = identities.handle(req.method ?? 'GET', req.url ?? '/', body);
      if (identityReply) return reply(res, identityReply);
      if (req.method === 'POST' && req.url === '/v2/email/outbound-emails') {
        const from = String(JSON.parse(body.toString('utf8') || '{}').FromEmailAddress ?? '');
        if (!identities.canSendFrom(from)) return reply(res, identities.notVerified(from));
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        async (upstreamRes) => {
          const responseBody = await readBody(upstreamRes);
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          res.end(responseBody);
          if (
            req.method === 'POST' &&
            req.url === '/v2/email/outbound-emails' &&
            upstreamRes.statusCode === 200
          ) {
            schedule(body, responseBody);
          }
        },
      );
      upstream.on('error', (error) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `SES emulator unreachable: ${error.message}` }));
      });
      upstream.end(body);
    } catch (error) {
      res.writeHead(500);
      res.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    async idle() {
      while (pending.size) await Promise.all([...pending]);
    },
    busy: () => pending.size > 0,
    async stop() {
      await Promise.all([...pending]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
