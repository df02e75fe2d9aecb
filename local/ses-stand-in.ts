import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SesEvent } from '../functions/adapters/ses/events.js';
import { EMAIL_ID_TAG } from '../functions/adapters/ses/mailer.js';
import { sesAllows } from '../functions/catalog.js';
import { CALLER_HEADER } from './caller-identity.js';
import { chance, type LocalFaults } from './faults.js';
import { joinsSuppressionList, type SentMessage, simulateEvents } from './mailbox-simulator.js';
import { LocalSesAccount, type SesAccountSettings } from './ses-account.js';
import { LOCAL_CONFIGURATION_SET, LocalConfigurationSets } from './ses-configuration-sets.js';
import { LocalIdentities, type LocalIdentityOptions, type SesReply } from './ses-identities.js';
import { SesLedger } from './ses-ledger.js';
import { LocalReceiptRules } from './ses-receipt-rules.js';
import {
  accessDenied,
  keepRaw,
  rawHeader,
  rawMessageOf,
  SEND_EMAIL_PATH,
  type SendEmailRequest,
  SUPPRESSED_PATH,
  sesAction,
  tagged,
} from './ses-requests.js';
import { type MessageTracking, startTrackingHost, TrackingTokens, trackHtml } from './ses-tracking.js';

/**
 * Local SES = the SES v2 emulator plus what it lacks: event publishing, identities, configuration sets
 * and v1's receipt rules. This proxy, in front of the emulator, answers the identity, configuration set
 * and receipt-rule APIs itself (ses-identities.ts, ses-configuration-sets.ts, ses-receipt-rules.ts)
 * and, as SES does, refuses a SendEmail whose sender's domain is not a verified identity or whose
 * configuration set does not exist. Every other request passes through unchanged, and for each
 * SendEmail the emulator accepted with a configuration set, it publishes the events SES would (see
 * mailbox-simulator.ts) that the set's destinations match to the events queue, as SNS raw delivery does.
 *
 * With open or click tracking on for a send, it rewrites the HTML part as SES does before the
 * emulator stores it, and serves the tracking links on a host of its own (ses-tracking.ts). It also keeps SES's account-level suppression list, as SES does: a hard-bounced or complaining
 * address joins it, a later send to it bounces as `OnAccountSuppressionList`, and
 * DeleteSuppressedDestination takes it off (in memory: a restart empties it).
 *
 * What SES took is written to a ledger before SES answers (ses-ledger.ts), so after a kill the
 * events it still owed can be published again (`republish`).
 *
 * It answers as AWS answers the calling function's role (the caller header, local/caller-identity.ts):
 * an SES call its catalog entry does not grant is refused with 403 AccessDeniedException. And it
 * enforces the account's sending limits as SES does (ses-account.ts): the send rate, the 24-hour
 * quota, the sandbox, paused sending; GetAccount reports them.
 */
export interface SesStandIn {
  endpoint: string;
  /** The open and click tracking host (SES's r.<region>.awstrack.me), e.g. http://127.0.0.1:8006. */
  trackingUrl: string;
  configurationSets: LocalConfigurationSets;
  receiptRules: LocalReceiptRules; // SES v1's receipt rules (receiving): ses-receipt-rules.ts
  ledger: SesLedger;
  /** The account's limits, as SES keeps them (paused sending can be turned on and off). */
  account: LocalSesAccount;
  /** Publishes again the events of messages SES took for these emails (after a restart). */
  republish(emailIds: Set<string>): number;
  /** Resolves once every event scheduled so far has been published. */
  idle(): Promise<void>;
  /** Whether events are scheduled but not yet published. */
  busy(): boolean;
  stop(): Promise<void>;
}

export { sesAction };

const readBody = (stream: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });

/** How the local SES behaves (serializable, so it can be started on the emulators' thread). */
export interface SesStandInSettings {
  eventsQueueUrl: string;
  /** Delay between sending and the delivery/bounce events. @default 150 */
  eventDelayMs?: number;
  /** How domain identities verify locally (delays, where they are kept). */
  identities?: LocalIdentityOptions;
  /** Where the ledger of what SES took is kept; none: in memory. */
  ledgerFile?: string;
  faults?: Pick<LocalFaults, 'ses' | 'sesEvents'>;
  /** The account's sending limits (LOCAL_SES_*). @default 14 per second, 50,000 per 24 hours */
  account?: SesAccountSettings;
  configurationSets?: {
    /** The sets the stack creates, each as lib/constructs/ses-events.ts makes it. @default ['email-service-local'] */
    stack?: string[];
    /** The stack's maximum delivery time, for its sets. */
    maxDeliverySeconds?: number;
    /** JSON file the sets are kept in across restarts; none: in memory. */
    file?: string;
  };
  /** Port of the tracking host; taken, any free one (links of earlier messages then lead nowhere). @default 0: any */
  trackingPort?: number;
}

/** The local SES as the service uses it, wherever it runs. */
export interface LocalSes {
  endpoint: string;
  /** The open and click tracking host's base URL. */
  trackingUrl: string;
  /** Pauses or resumes sending for the account, as SES does for an account under review. */
  setSendingPaused(paused: boolean): Promise<void>;
  /** Whether the active receipt rule set takes mail for this address (SES's matching, local/ses-receipt-rules.ts). */
  acceptsRecipient(address: string): Promise<boolean>;
  republish(emailIds: Set<string>): Promise<number>;
  idle(): Promise<void>;
  busy(): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startSesStandIn(
  options: SesStandInSettings & {
    emulatorEndpoint: string;
    sqs: SQSClient;
    log?: (message: string, fields?: Record<string, unknown>) => void;
  },
): Promise<SesStandIn> {
  const target = new URL(options.emulatorEndpoint);
  const pending = new Set<Promise<void>>();
  const identities = new LocalIdentities(options.identities);
  const ledger = new SesLedger(options.ledgerFile);
  const account = new LocalSesAccount(options.account);
  const sets = new LocalConfigurationSets({
    file: options.configurationSets?.file,
    verifiedDomain: (domain) => identities.verifiedDomain(domain),
  });
  const receiptRules = new LocalReceiptRules((domain) => identities.verifiedDomain(domain));
  for (const name of options.configurationSets?.stack ?? [LOCAL_CONFIGURATION_SET])
    sets.defineStackSet(name, options.configurationSets?.maxDeliverySeconds);
  const tokens = new TrackingTokens();
  const taken = ledger.acceptedMessages();
  // What SES took before a restart still counts against the 24-hour quota, and its tracked links
  // still lead where they did.
  account.restore(
    taken.map(({ message }) => ({ at: message.sentAt.getTime(), recipients: message.recipients.length })),
  );
  for (const { message } of taken) tokens.add(message);
  const faults = options.faults ?? {};
  /** SES's account-level suppression list (lower-cased addresses). */
  const accountSuppressed = new Set<string>();
  const reply = (res: ServerResponse, answer: SesReply) => {
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      ...(answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {}),
    });
    res.end(JSON.stringify(answer.body));
  };

  // Events falling due together go in one SendMessageBatch (ten at most): on AWS each is its own
  // SNS publish and SQS delivery, here one request carries them.
  const batch: { body: string; done: () => void; failed: (error: unknown) => void }[] = [];
  const flush = () => {
    const taken = batch.splice(0, 10);
    if (batch.length) setImmediate(flush);
    options.sqs
      .send(
        new SendMessageBatchCommand({
          QueueUrl: options.eventsQueueUrl,
          Entries: taken.map((entry, i) => ({ Id: String(i), MessageBody: entry.body })),
        }),
      )
      .then(({ Failed = [] }) => {
        const failed = new Set(Failed.map((f) => f.Id));
        taken.forEach((entry, i) => {
          if (failed.has(String(i))) entry.failed(new Error('the events queue refused it'));
          else entry.done();
        });
      })
      .catch((error) => {
        for (const entry of taken) entry.failed(error);
      });
  };
  const publish = (event: SesEvent) =>
    new Promise<void>((done, failed) => {
      if (!batch.length) setImmediate(flush);
      batch.push({ body: JSON.stringify(event), done, failed });
    });

  /** Publishes an event now, once per destination of its set that takes it (opens and clicks). */
  const publishNow = (message: SentMessage, event: SesEvent) => {
    for (let copy = sets.publications(message.configurationSet, event.eventType); copy > 0; copy--) {
      const job: Promise<void> = publish(event)
        .catch((error) => options.log?.('could not publish SES event', { error: String(error) }))
        .finally(() => pending.delete(job));
      pending.add(job);
    }
  };
  const trackingHost = await startTrackingHost({
    port: options.trackingPort,
    tokens,
    publish: publishNow,
    log: options.log,
  });

  /**
   * Publishes a message's events, each after its delay (plus the faults' extra delay and copies),
   * those its set's destinations take: none of a type no enabled destination matches, one per
   * destination that does.
   */
  const schedule = (message: SentMessage, shiftMs = 0) => {
    const onList = (address: string) => accountSuppressed.has(address);
    const events = simulateEvents(message, options.eventDelayMs, onList);
    for (const address of message.recipients.map((r) =>
      (/<([^>]+)>\s*$/.exec(r)?.[1] ?? r).trim().toLowerCase(),
    ))
      if (joinsSuppressionList(address)) accountSuppressed.add(address);
    for (const { delayMs, event } of events) {
      const copies =
        sets.publications(message.configurationSet, event.eventType) *
        (chance(faults.sesEvents?.duplicate) ? 2 : 1);
      for (let copy = 0; copy < copies; copy++) {
        const extra = Math.floor(Math.random() * (faults.sesEvents?.maxExtraDelayMs ?? 0));
        const job: Promise<void> = new Promise<void>((resolve) =>
          setTimeout(resolve, Math.max(0, delayMs + extra - shiftMs)),
        )
          .then(() => publish(event))
          .catch((error) => options.log?.('could not publish SES event', { error: String(error) }))
          .finally(() => pending.delete(job));
        pending.add(job);
      }
    }
  };

  const toMessage = (
    request: SendEmailRequest,
    messageId: string,
    tracking?: MessageTracking,
    rawSubject?: string,
  ): SentMessage => ({
    messageId,
    from: request.FromEmailAddress ?? '',
    recipients: [
      ...(request.Destination?.ToAddresses ?? []),
      ...(request.Destination?.CcAddresses ?? []),
      ...(request.Destination?.BccAddresses ?? []),
    ],
    subject: request.Content?.Simple?.Subject?.Data ?? rawSubject ?? '',
    tags: Object.fromEntries((request.EmailTags ?? []).map((t) => [t.Name, [t.Value]])),
    configurationSet: request.ConfigurationSetName ?? '',
    sentAt: new Date(),
    ...(tracking ? { tracking } : {}),
  });

  /**
   * The message as SES sends it: with open or click tracking on, its HTML part rewritten (a send's
   * ConfigurationOverrides.Tracking, ENABLED or DISABLED, wins over its set, where an enabled
   * destination matching OPEN or CLICK turns each on). Raw content (an SMTP email) is left as it is
   * here, tracking or not: SES rewrites its HTML part as it does a Simple one's, this stand-in does not.
   */
  const tracked = (request: SendEmailRequest): { body?: Buffer; tracking?: MessageTracking } => {
    const set = request.ConfigurationSetName;
    const overrides = request.ConfigurationOverrides?.Tracking;
    const on = (override: string | undefined, type: 'OPEN' | 'CLICK') =>
      override === 'ENABLED' || (override !== 'DISABLED' && set !== undefined && sets.matches(set, type));
    const open = on(overrides?.OpenTrackingEnabled, 'OPEN');
    const click = on(overrides?.ClickTrackingEnabled, 'CLICK');
    const html = request.Content?.Simple?.Body?.Html;
    if (!(open || click) || typeof html?.Data !== 'string') return {};
    const customDomain = set ? sets.trackingOptions(set)?.CustomRedirectDomain : undefined;
    const result = trackHtml(html.Data, { open, click, baseUrl: trackingHost.url, customDomain });
    if (!result.tracking.open && !result.tracking.links.length) return {};
    html.Data = result.html;
    return { body: Buffer.from(JSON.stringify(request)), tracking: result.tracking };
  };

  /** A SendEmail: refused, or forwarded to the emulator; if it takes it, recorded and its events scheduled. */
  const sendEmail = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    let request: SendEmailRequest;
    try {
      request = JSON.parse(body.toString('utf8') || '{}') as SendEmailRequest;
    } catch {
      return reply(res, { status: 400, errorType: 'BadRequestException', body: { message: 'Invalid JSON' } });
    }
    const setName = request.ConfigurationSetName;
    if (setName !== undefined) {
      if (!sets.has(setName)) return reply(res, sets.notFound(setName));
      if (!sets.sendingEnabled(setName))
        return reply(res, {
          status: 400,
          errorType: 'SendingPausedException',
          body: { message: `Sending is paused for configuration set ${setName}.` },
        });
    }
    // A raw message (an SMTP email) without FromEmailAddress is sent from its From header.
    const raw = rawMessageOf(request);
    const header = raw ? rawHeader(raw) : undefined;
    const from = String(request.FromEmailAddress ?? header?.from ?? '');
    if (!identities.canSendFrom(from)) return reply(res, identities.notVerified(from));
    const recipients = [
      ...(request.Destination?.ToAddresses ?? []),
      ...(request.Destination?.CcAddresses ?? []),
      ...(request.Destination?.BccAddresses ?? []),
    ];
    const emailId = request.EmailTags?.find((t) => t.Name === EMAIL_ID_TAG)?.Value;
    const limited: SesReply | undefined =
      account.take(recipients, (address) => identities.verifiedRecipient(address)) ??
      (chance(faults.ses?.throttle)
        ? {
            status: 429,
            errorType: 'TooManyRequestsException',
            body: { message: 'Maximum sending rate exceeded.' },
          }
        : undefined);
    if (limited) {
      if (emailId) ledger.refused(emailId, limited.errorType ?? String(limited.status));
      return reply(res, limited);
    }
    if (emailId) ledger.forwarded(emailId);
    const rewritten = tracked(request);
    const upstream = await forward(req, rewritten.body ?? body);
    if (upstream.status === 200) {
      const sent = JSON.parse(upstream.body.toString('utf8')) as { MessageId?: string };
      const message = sent.MessageId
        ? toMessage(request, sent.MessageId, rewritten.tracking, header?.subject)
        : undefined;
      if (raw && sent.MessageId) keepRaw(sent.MessageId, raw, request);
      if (message?.tracking) tokens.add(message);
      // As on AWS: no configuration set, no events.
      if (message && request.ConfigurationSetName) {
        if (emailId) ledger.accepted(emailId, message);
        schedule(message);
      }
      if (chance(faults.ses?.hangAfterAccept)) return; // taken, never answered: the client times out
      if (chance(faults.ses?.errorAfterAccept))
        return reply(res, {
          status: 500,
          errorType: 'InternalFailure',
          body: { message: 'The request processing has failed because of an unknown error.' },
        });
    }
    res.writeHead(upstream.status, upstream.headers);
    res.end(upstream.body);
  };

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve) => {
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          // The body may be the rewritten one (tracking).
          headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
        },
        async (upstreamRes) =>
          resolve({
            status: upstreamRes.statusCode ?? 502,
            headers: upstreamRes.headers,
            body: await readBody(upstreamRes),
          }),
      );
      upstream.on('error', (error) =>
        resolve({
          status: 502,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify({ message: `SES emulator unreachable: ${error.message}` })),
        }),
      );
      upstream.end(body);
    });

  const server: Server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      if (receiptRules.handle(req, res, body)) return; // SES v1 (awsQuery): receipt rules
      const action = sesAction(req.method ?? 'GET', req.url ?? '/', body);
      const caller = req.headers[CALLER_HEADER];
      for (const needed of action
        ? [
            action,
            ...(/^Create(EmailIdentity|ConfigurationSet)$/.test(action) && tagged(body)
              ? ['TagResource']
              : []),
          ]
        : [])
        if (!sesAllows(typeof caller === 'string' ? caller : undefined, needed))
          return reply(res, accessDenied(String(caller), needed));
      if (action === 'GetAccount') return reply(res, account.getAccount());
      const identityReply =
        identities.handle(req.method ?? 'GET', req.url ?? '/', body) ??
        sets.handle(req.method ?? 'GET', req.url ?? '/', body);
      if (identityReply) return reply(res, identityReply);
      if (req.method === 'POST' && req.url === SEND_EMAIL_PATH) return await sendEmail(req, res, body);
      if (req.method === 'DELETE' && req.url?.startsWith(SUPPRESSED_PATH)) {
        const address = decodeURIComponent(
          req.url.slice(SUPPRESSED_PATH.length).split('?')[0] ?? '',
        ).toLowerCase();
        if (!accountSuppressed.delete(address))
          return reply(res, {
            status: 404,
            errorType: 'NotFoundException',
            body: { message: `Email address (${address}) does not exist on your suppression list.` },
          });
        return reply(res, { status: 200, body: {} });
      }
      const upstream = await forward(req, body);
      res.writeHead(upstream.status, upstream.headers);
      res.end(upstream.body);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    trackingUrl: trackingHost.url,
    configurationSets: sets,
    receiptRules,
    ledger,
    account,
    republish(emailIds) {
      let count = 0;
      for (const { emailId, message } of ledger.acceptedMessages()) {
        if (!emailIds.has(emailId)) continue;
        // Due long ago: published at once, in their order.
        schedule(message, Number.MAX_SAFE_INTEGER);
        count++;
      }
      ledger.compact(emailIds);
      return count;
    },
    async idle() {
      while (pending.size) await Promise.all([...pending]);
    },
    busy: () => pending.size > 0,
    async stop() {
      await Promise.all([...pending]);
      server.closeAllConnections();
      await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), trackingHost.stop()]);
    },
  };
}

/** The local SES on this thread, as the service uses it. */
export async function startSesHere(options: Parameters<typeof startSesStandIn>[0]): Promise<LocalSes> {
  const standIn = await startSesStandIn(options);
  return {
    endpoint: standIn.endpoint,
    trackingUrl: standIn.trackingUrl,
    setSendingPaused: async (paused) => standIn.account.setSendingPaused(paused),
    acceptsRecipient: async (address) => standIn.receiptRules.acceptsRecipient(address),
    republish: async (emailIds) => standIn.republish(emailIds),
    idle: () => standIn.idle(),
    busy: async () => standIn.busy(),
    stop: () => standIn.stop(),
  };
}
