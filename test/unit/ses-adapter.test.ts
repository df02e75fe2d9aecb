import { readFileSync } from 'node:fs';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { newSesSendClient } from '../../functions/adapters/aws-clients.js';
import { IDLE_SOCKET_MS } from '../../functions/adapters/ses/connections.js';
import { fromSesEvent, type SesEvent } from '../../functions/adapters/ses/events.js';
import { SesMailer, toSesAddress } from '../../functions/adapters/ses/mailer.js';
import { MailerError } from '../../functions/emails/ports.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { emailContent } from '../support/fakes.js';

const bounceFixture = readFileSync(new URL('../fixtures/ses-event-bounce.json', import.meta.url), 'utf8');
const sesEvent = (
  id: string,
  change: (e: SesEvent & Record<string, unknown>) => void = () => undefined,
): SesEvent => {
  const event = JSON.parse(bounceFixture.replace('__EMAIL_ID__', id));
  change(event);
  return event;
};

const content = emailContent({
  from: '"Acme" <hello@acme.com>',
  to: ['a@example.com'],
  cc: ['c@example.com'],
  reply_to: ['r@example.com'],
  html: '<p>Hi</p>',
  text: null,
});

const error = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} message`), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    ...extra,
  });

describe('SesMailer (SES v2 SendEmail, documented shapes)', () => {
  const ses = mockClient(SESv2Client);
  beforeEach(() => ses.reset());

  it('sends Simple content with the configuration set and the email id tag', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: '0100018c-aaaa-bbbb-cccc-000000000000-000000' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'EmailService-ConfigurationSet');
    const result = await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content });
    expect(result.messageId).toBe('0100018c-aaaa-bbbb-cccc-000000000000-000000');
    expect(ses.commandCalls(SendEmailCommand)[0]?.args[0].input).toEqual({
      FromEmailAddress: '"Acme" <hello@acme.com>',
      Destination: {
        ToAddresses: ['a@example.com'],
        CcAddresses: ['c@example.com'],
        BccAddresses: undefined,
      },
      ReplyToAddresses: ['r@example.com'],
      Content: {
        Simple: {
          Subject: { Data: 'Hi', Charset: 'UTF-8' },
          Body: { Html: { Data: '<p>Hi</p>', Charset: 'UTF-8' } },
        },
      },
      ConfigurationSetName: 'EmailService-ConfigurationSet',
      // Its destination takes opens and clicks, which would turn tracking on for every email: off.
      ConfigurationOverrides: {
        Tracking: { OpenTrackingEnabled: 'DISABLED', ClickTrackingEnabled: 'DISABLED' },
      },
      EmailTags: [{ Name: 'email_id', Value: 'em_01m80mv90eew9ryfvqd1ksnhes' }],
    });
  });

  it("tracks as the sender's domain says, per send, and sends with the domain's own configuration set when it has one", async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'stack-set');
    await mailer.send({
      id: 'em_01m80mv90eew9ryfvqd1ksnhes',
      content,
      sender: { openTracking: true, clickTracking: false },
    });
    await mailer.send({
      id: 'em_01m80mv90eew9ryfvqd1ksnhes',
      content,
      sender: { openTracking: false, clickTracking: true, configurationSet: 'stack-dom_1' },
    });
    const [first, second] = ses.commandCalls(SendEmailCommand).map((c) => c.args[0].input);
    expect(first).toMatchObject({
      ConfigurationSetName: 'stack-set',
      ConfigurationOverrides: {
        Tracking: { OpenTrackingEnabled: 'ENABLED', ClickTrackingEnabled: 'DISABLED' },
      },
    });
    expect(second).toMatchObject({
      ConfigurationSetName: 'stack-dom_1',
      ConfigurationOverrides: {
        Tracking: { OpenTrackingEnabled: 'DISABLED', ClickTrackingEnabled: 'ENABLED' },
      },
    });
  });

  it("adds the user's tags after its own, and the custom headers, as SES v2 takes them", async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'set');
    await mailer.send({
      id: 'em_01m80mv90eew9ryfvqd1ksnhes',
      content: {
        ...content,
        tags: [
          { name: 'category', value: 'welcome' },
          { name: 'user-id', value: 'u_42' },
        ],
        headers: { 'List-Unsubscribe': '<https://acme.com/unsub>', 'X-Entity-Ref-ID': '123' },
      },
    });
    const input = ses.commandCalls(SendEmailCommand)[0]?.args[0].input;
    expect(input?.EmailTags).toEqual([
      { Name: 'email_id', Value: 'em_01m80mv90eew9ryfvqd1ksnhes' },
      { Name: 'category', Value: 'welcome' },
      { Name: 'user-id', Value: 'u_42' },
    ]);
    expect(input?.Content?.Simple?.Headers).toEqual([
      { Name: 'List-Unsubscribe', Value: '<https://acme.com/unsub>' },
      { Name: 'X-Entity-Ref-ID', Value: '123' },
    ]);
  });

  it('encodes non-ASCII display names as RFC 2047 words, as SES requires', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: 'm' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'set');
    await mailer.send({
      id: 'em_01m80mv90eew9ryfvqd1ksnhes',
      content: {
        ...content,
        from: 'José Müller <jose@acme.com>',
        to: ['Plain <a@example.com>'],
        reply_to: [],
      },
    });
    const input = ses.commandCalls(SendEmailCommand)[0]?.args[0].input;
    expect(input?.FromEmailAddress).toBe(
      `=?UTF-8?B?${Buffer.from('José Müller').toString('base64')}?= <jose@acme.com>`,
    );
    expect(input?.Destination?.ToAddresses).toEqual(['Plain <a@example.com>']);
    expect(input?.ReplyToAddresses).toBeUndefined();
  });

  it('splits long non-ASCII names into encoded-words of at most 75 characters', () => {
    const name = 'Ünïcödé '.repeat(12).trim();
    const address = toSesAddress(`${name} <a@acme.com>`);
    const words = address.replace(' <a@acme.com>', '').split(' ');
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    const decoded = words.map((w) => Buffer.from(w.slice(10, -2), 'base64').toString('utf8')).join('');
    expect(decoded).toBe(name);
  });

  const connectTimeout = Object.assign(
    new Error(
      'the request socket did not establish a connection with the server within the configured timeout of 2000 ms.',
    ),
    { name: 'TimeoutError' },
  );
  it.each([
    // SES answered and refused for good.
    ['MessageRejected', 'rejected', error('MessageRejected', 400)],
    ['MailFromDomainNotVerifiedException', 'rejected', error('MailFromDomainNotVerifiedException', 400)],
    ['BadRequestException', 'rejected', error('BadRequestException', 400)],
    ['NotFoundException', 'rejected', error('NotFoundException', 404)],
    // The account's limits: it did not take the email, and it waits for SES (not an attempt).
    ['TooManyRequestsException', 'rate', error('TooManyRequestsException', 429)],
    ['ThrottlingException', 'rate', error('ThrottlingException', 400)],
    ['an unnamed 429', 'rate', error('Error', 429)],
    ['LimitExceededException', 'quota', error('LimitExceededException', 400)],
    [
      'a throttle for the daily quota',
      'quota',
      Object.assign(error('TooManyRequestsException', 429), { message: 'Daily message quota exceeded.' }),
    ],
    ['SendingPausedException', 'paused', error('SendingPausedException', 400)],
    ['AccountSuspendedException', 'paused', error('AccountSuspendedException', 400)],
    // Another 4xx: it did not take the email; a retry counts as an attempt.
    ['AccessDeniedException', 'refused', error('AccessDeniedException', 403)],
    // SES was never reached: no connection could be made.
    ['a refused connection', 'unreached', error('Error', undefined, { code: 'ECONNREFUSED' })],
    ['an unknown host', 'unreached', error('Error', undefined, { code: 'ENOTFOUND' })],
    ['a connection timeout', 'unreached', connectTimeout],
    ['no credentials', 'refused', error('CredentialsProviderError')],
    // SES may have taken it.
    ['InternalFailure (500)', 'unknown', error('InternalFailure', 500)],
    ['ServiceUnavailable (503)', 'unknown', error('ServiceUnavailable', 503)],
    ['a request timeout', 'unknown', error('TimeoutError', undefined, { code: 'ETIMEDOUT' })],
    ['a reset connection', 'unknown', error('TimeoutError', undefined, { code: 'ECONNRESET' })],
    ['a broken pipe', 'unknown', error('Error', undefined, { code: 'EPIPE' })],
    ['a 200 that cannot be read', 'unknown', error('SyntaxError', 200)],
  ])('%s means %s', async (_, kind, thrown) => {
    ses.on(SendEmailCommand).rejects(thrown);
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1', maxAttempts: 1 }), 'set');
    const failure = await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content }).catch((e) => e);
    expect(failure).toBeInstanceOf(MailerError);
    expect(failure.kind).toBe(kind);
  });

  it('a 200 without a MessageId is an unknown outcome (SES has the email)', async () => {
    ses.on(SendEmailCommand).resolves({});
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1' }), 'set');
    const failure = await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content }).catch((e) => e);
    expect(failure).toMatchObject({ kind: 'unknown', code: 'NoMessageId' });
  });

  it('a send SES never got (no connection) is made again at once, once', async () => {
    ses
      .on(SendEmailCommand)
      .rejectsOnce(error('Error', undefined, { code: 'ECONNREFUSED' }))
      .resolves({ MessageId: 'ses-2' });
    const mailer = new SesMailer(new SESv2Client({ region: 'us-east-1', maxAttempts: 1 }), 'set');
    expect(await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content })).toEqual({
      messageId: 'ses-2',
    });
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(2);
    ses.reset();
    ses.on(SendEmailCommand).rejects(error('Error', undefined, { code: 'ECONNRESET' }));
    // A reset after the connection was made: never again (SES may have it).
    expect(await mailer.send({ id: 'em_01m80mv90eew9ryfvqd1ksnhes', content }).catch((e) => e)).toMatchObject(
      {
        kind: 'unknown',
      },
    );
    expect(ses.commandCalls(SendEmailCommand)).toHaveLength(1);
  });

  it('the send client makes one attempt, on kept-alive connections it can close, with bounded connect, request and stall waits', async () => {
    const client = newSesSendClient({ connectMs: 2000, requestMs: 10_000 });
    expect(await client.config.maxAttempts()).toBe(1);
    const handler = client.config.requestHandler as unknown as {
      configProvider: Promise<Record<string, unknown>>;
    };
    const config = (await handler.configProvider) as Record<string, unknown> & {
      httpsAgent: { keepAlive: boolean; options: { timeout?: number } };
    };
    expect(config).toMatchObject({
      connectionTimeout: 2000,
      requestTimeout: 10_000,
      socketTimeout: 10_000,
      throwOnRequestTimeout: true,
    });
    // Kept alive within an invocation, idle sockets closed after a few seconds (and before the
    // invocation returns: test/integration/ses-connections.test.ts).
    expect(config.httpsAgent.keepAlive).toBe(true);
    expect(config.httpsAgent.options.timeout).toBe(IDLE_SOCKET_MS);
    client.destroy();
  });
});

describe('fromSesEvent', () => {
  const id = newEmailId();
  it('maps each SES event type', () => {
    const fixture = sesEvent(id);
    const sent = { at: fixture.mail.timestamp, providerMessageId: fixture.mail.messageId };
    expect(fromSesEvent(fixture)).toEqual({
      emailId: id,
      type: 'bounced',
      at: '2026-11-22T03:20:01.123Z',
      recipients: ['bounce@simulator.amazonses.com'],
      detail: 'Permanent: General: smtp; 550 5.1.1 user unknown',
      bounce: { type: 'Permanent', subType: 'General' },
      sent,
      email: {
        from: fixture.mail.commonHeaders?.from?.[0],
        subject: fixture.mail.commonHeaders?.subject,
        tags: {},
      },
    });
    const base = (eventType: string, extra: Record<string, unknown>) =>
      fromSesEvent(
        sesEvent(id, (e) => {
          e.eventType = eventType;
          delete e.bounce;
          Object.assign(e, extra);
        }),
      );
    expect(
      base('Delivery', { delivery: { timestamp: 't', recipients: ['a@x.com'], smtpResponse: '250 ok' } }),
    ).toMatchObject({
      type: 'delivered',
      recipients: ['a@x.com'],
    });
    // Send: SES's own word that it took the email (what settles an attempt whose worker died).
    expect(base('Send', { send: {} })).toEqual({
      emailId: id,
      type: 'sent',
      at: fixture.mail.timestamp,
      recipients: fixture.mail.destination,
      sent,
      email: expect.any(Object),
    });
    expect(base('Reject', { reject: { reason: 'Bad content' } })).toMatchObject({
      type: 'failed',
      detail: expect.stringContaining('Bad content'),
    });
    expect(base('Rendering Failure', { renderingFailure: { errorMessage: 'x' } })?.type).toBe('failed');
    expect(
      base('Complaint', {
        complaint: { timestamp: 't', complainedRecipients: [{ emailAddress: 'a@x.com' }] },
      })?.type,
    ).toBe('complained');
    expect(
      base('DeliveryDelay', {
        deliveryDelay: { timestamp: 't', delayType: 'MailboxFull', delayedRecipients: [] },
      })?.type,
    ).toBe('delayed');
    // The user's tags for webhook payloads, without SES's own and our email id tag.
    expect(
      fromSesEvent(
        sesEvent(id, (e) => {
          e.mail.tags = { ...e.mail.tags, 'ses:from-domain': ['acme.test'], category: ['receipt'] };
        }),
      )?.email?.tags,
    ).toEqual({ category: 'receipt' });
    // An Open or Click record without its own part says nothing: ignored.
    expect(base('Open', {})).toBeUndefined();
    expect(base('Click', {})).toBeUndefined();
  });

  const engagementEvent = (name: 'open' | 'click', change: (e: SesEvent) => void = () => undefined) => {
    const event = JSON.parse(
      readFileSync(new URL(`../fixtures/ses-event-${name}.json`, import.meta.url), 'utf8').replace(
        '__EMAIL_ID__',
        id,
      ),
    ) as SesEvent;
    change(event);
    return event;
  };

  it('maps an Open to `opened`, for every destination of the message (SES cannot tell them apart)', () => {
    const event = engagementEvent('open');
    expect(fromSesEvent(event)).toEqual({
      emailId: id,
      type: 'opened',
      at: event.open?.timestamp,
      recipients: ['reader@example.com'],
      engagement: {
        ipAddress: '192.0.2.1',
        userAgent: event.open?.userAgent,
        timestamp: event.open?.timestamp,
      },
      sent: { at: event.mail.timestamp, providerMessageId: event.mail.messageId },
      email: { from: 'hello@acme.test', subject: 'Hello', tags: {} },
    });
    const many = engagementEvent('open', (e) => {
      e.mail.destination = ['a@x.test', 'b@x.test'];
    });
    expect(fromSesEvent(many)?.recipients).toEqual(['a@x.test', 'b@x.test']);
  });

  it("maps a Click to `clicked` with Resend's click fields (link tags are SES's alone)", () => {
    const event = engagementEvent('click');
    const mapped = fromSesEvent(event);
    expect(mapped).toMatchObject({
      type: 'clicked',
      at: '2026-11-22T03:26:42.111Z',
      recipients: ['reader@example.com'],
      engagement: {
        ipAddress: '192.0.2.1',
        link: 'https://acme.test/pricing?utm_source=email',
        timestamp: '2026-11-22T03:26:42.111Z',
        userAgent: event.click?.userAgent,
      },
    });
    expect(mapped?.automated).toBeUndefined();
  });

  it('flags opens and clicks a machine likely made (user agent, haste), and keeps them', () => {
    const withAgent = (name: 'open' | 'click', userAgent: string) =>
      fromSesEvent(
        engagementEvent(name, (e) => {
          const part = e.open ?? e.click;
          if (part) part.userAgent = userAgent;
        }),
      );
    // Apple Mail Privacy Protection's bare agent, Gmail's image proxy.
    expect(withAgent('open', 'Mozilla/5.0')).toMatchObject({ type: 'opened', automated: 'privacy_proxy' });
    expect(
      withAgent(
        'open',
        'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
      )?.automated,
    ).toBe('privacy_proxy');
    // Link scanners, HTTP libraries, no agent at all.
    expect(withAgent('click', 'Mozilla/5.0 (compatible; Barracuda Sentinel)')).toMatchObject({
      type: 'clicked',
      automated: 'scanner',
    });
    expect(withAgent('click', 'python-requests/2.32.3')?.automated).toBe('scanner');
    expect(withAgent('click', '')?.automated).toBe('scanner');
    // A browser's agent, but within five seconds of sending: too soon for a reader.
    const hasty = fromSesEvent(
      engagementEvent('click', (e) => {
        if (e.click) e.click.timestamp = new Date(Date.parse(e.mail.timestamp) + 3_000).toISOString();
      }),
    );
    expect(hasty).toMatchObject({ type: 'clicked', automated: 'too_soon' });
    const later = fromSesEvent(
      engagementEvent('click', (e) => {
        if (e.click) e.click.timestamp = new Date(Date.parse(e.mail.timestamp) + 6_000).toISOString();
      }),
    );
    expect(later?.automated).toBeUndefined();
  });

  it('ignores events without our email id tag', () => {
    expect(fromSesEvent(sesEvent(id, (e) => delete e.mail.tags?.email_id))).toBeUndefined();
    expect(fromSesEvent(sesEvent('not-an-id'))).toBeUndefined();
  });
});
