import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  type EventType,
  SESv2Client,
  SendEmailCommand,
} from '@aws-sdk/client-sesv2';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { LOCAL_EVENTS_TOPIC_ARN } from '../../local/ses-configuration-sets.js';
import { type SesStandIn, type SesStandInSettings, startSesStandIn } from '../../local/ses-stand-in.js';

/**
 * SES's open and click tracking as the local SES does it: what the emulator stores is the message
 * SES would send (links rewritten, the pixel added), and the tracking host answers as SES's does,
 * publishing Open and Click events in SES's shapes to the events queue.
 */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let emulators: Emulators;
let sqs: SQSClient;
let eventsQueue: { url: string };
let standIn: SesStandIn;
let ses: SESv2Client;
let dataDir: string;
/** Every event read off the queue so far. */
const seen: SesEvent[] = [];

const settings = (): Omit<SesStandInSettings, 'eventsQueueUrl'> => ({
  eventDelayMs: 10,
  identities: { verifyAfterMs: 0 },
  ledgerFile: join(dataDir, 'sent.jsonl'),
  configurationSets: { file: join(dataDir, 'configuration-sets.json') },
});

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0 });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  eventsQueue = (
    await ensureQueueWithDlq(sqs, 'tracking-events', { maxReceiveCount: 3, visibilityTimeoutSeconds: 30 })
  ).queue;
  dataDir = mkdtempSync(join(tmpdir(), 'ses-tracking-'));
  standIn = await startSesStandIn({
    ...settings(),
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: eventsQueue.url,
  });
  ses = new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: 'acme.test' }));
  await set('engaged', ['SEND', 'DELIVERY', 'OPEN', 'CLICK']);
  await set('clicks-only', ['SEND', 'CLICK']);
  await set('sends-only', ['SEND']);
});
afterAll(async () => {
  await standIn?.stop();
  await emulators.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await fetch(`${emulators.sesEndpoint}/clear-store`, { method: 'POST' });
});

async function set(name: string, types: EventType[], customDomain?: string) {
  await ses.send(
    new CreateConfigurationSetCommand({
      ConfigurationSetName: name,
      ...(customDomain ? { TrackingOptions: { CustomRedirectDomain: customDomain } } : {}),
    }),
  );
  await ses.send(
    new CreateConfigurationSetEventDestinationCommand({
      ConfigurationSetName: name,
      EventDestinationName: 'events',
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: types,
        SnsDestination: { TopicArn: LOCAL_EVENTS_TOPIC_ARN },
      },
    }),
  );
}

const HTML = [
  '<html><body>',
  '<p><a href="https://acme.test/pricing?plan=pro&amp;utm_source=email" ses:tags="campaign:spring">Pricing</a></p>',
  '<p><a ses:no-track href="https://acme.test/account">Account</a></p>',
  '<p><a href="mailto:help@acme.test">Write to us</a> <a href="#top">Top</a></p>',
  '</body></html>',
].join('');
const TEXT = 'Pricing: https://acme.test/pricing';

/** Sends HTML and text through the local SES with `set` and the tracking overrides given. */
async function send(configurationSet: string, tracking?: 'ENABLED' | 'DISABLED', html = HTML) {
  const emailId = newEmailId();
  const { MessageId } = await ses.send(
    new SendEmailCommand({
      FromEmailAddress: 'hello@acme.test',
      Destination: { ToAddresses: ['reader@acme.test'] },
      Content: {
        Simple: {
          Subject: { Data: `Tracked ${emailId}` },
          Body: { Html: { Data: html }, Text: { Data: TEXT } },
        },
      },
      ConfigurationSetName: configurationSet,
      EmailTags: [{ Name: 'email_id', Value: emailId }],
      ...(tracking
        ? {
            ConfigurationOverrides: {
              Tracking: { OpenTrackingEnabled: tracking, ClickTrackingEnabled: tracking },
            },
          }
        : {}),
    }),
  );
  if (!MessageId) throw new Error('no MessageId');
  return { emailId, messageId: MessageId, stored: await stored(MessageId) };
}

/** The message as the SES emulator stored it (its viewer's /store). */
async function stored(messageId: string) {
  const { emails } = (await (await fetch(`${emulators.sesEndpoint}/store`)).json()) as {
    emails: { messageId: string; body: { html?: string; text?: string } }[];
  };
  const email = emails.find((e) => e.messageId === messageId);
  if (!email) throw new Error(`the emulator has no message ${messageId}`);
  return email.body;
}

/** The events published for a message so far (everything owed is published first). */
async function eventsOf(messageId: string, type?: string): Promise<SesEvent[]> {
  await standIn.idle();
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: eventsQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!Messages.length) break;
    seen.push(...Messages.map((m) => JSON.parse(m.Body ?? '{}') as SesEvent));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: eventsQueue.url,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return seen.filter((e) => e.mail.messageId === messageId && (!type || e.eventType === type));
}

const linksIn = (html: string, base: string) =>
  [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string).filter((href) => href.startsWith(base));
const pixelIn = (html: string, base: string) =>
  new RegExp(`<img alt="" src="(${base}/I0/[A-Za-z0-9_-]+)"[^>]*>`).exec(html)?.[1];

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';

describe('open and click tracking', () => {
  it('with tracking ENABLED: the stored message has its http(s) links rewritten and the pixel; ses:no-track, mailto: and #anchors untouched; text as sent', async () => {
    const { stored: body } = await send('engaged', 'ENABLED');
    const base = standIn.trackingUrl;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const links = linksIn(body.html ?? '', base);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(new RegExp(`^${base}/L0/[A-Za-z0-9_-]{22}$`));
    expect(body.html).not.toContain('acme.test/pricing');
    expect(body.html).toContain('<a ses:no-track href="https://acme.test/account">');
    expect(body.html).toContain('<a href="mailto:help@acme.test">');
    expect(body.html).toContain('<a href="#top">');
    // The pixel at the end of the body.
    expect(body.html).toMatch(/<img alt="" src="[^"]+\/I0\/[A-Za-z0-9_-]{22}"[^>]*><\/body><\/html>$/);
    expect(body.text).toBe(TEXT);
  });

  it('with tracking DISABLED: the message is stored as sent, though its set takes opens and clicks', async () => {
    const { stored: body } = await send('engaged', 'DISABLED');
    expect(body.html).toBe(HTML);
  });

  it('without overrides, the set decides: a destination matching CLICK rewrites links, none matching OPEN adds no pixel', async () => {
    const { stored: body } = await send('clicks-only');
    expect(linksIn(body.html ?? '', standIn.trackingUrl)).toHaveLength(1);
    expect(pixelIn(body.html ?? '', standIn.trackingUrl)).toBeUndefined();
  });

  it('fetching the pixel answers a 1×1 GIF, not to be cached, and publishes an Open event each time, with the message’s mail and tags', async () => {
    const { emailId, messageId, stored: body } = await send('engaged', 'ENABLED');
    const pixel = pixelIn(body.html ?? '', standIn.trackingUrl) as string;
    const response = await fetch(pixel, { headers: { 'user-agent': UA } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/gif');
    expect(response.headers.get('cache-control')).toContain('no-store');
    const gif = Buffer.from(await response.arrayBuffer());
    expect(gif.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect([gif.readUInt16LE(6), gif.readUInt16LE(8)]).toEqual([1, 1]);

    const [open] = await eventsOf(messageId, 'Open');
    const [sendEvent] = await eventsOf(messageId, 'Send');
    expect(open).toEqual({
      eventType: 'Open',
      mail: sendEvent?.mail,
      open: { ipAddress: '127.0.0.1', timestamp: expect.any(String), userAgent: UA },
    });
    expect(open?.mail.tags?.email_id).toEqual([emailId]);
    expect(Date.parse(open?.open?.timestamp ?? '')).toBeGreaterThanOrEqual(
      Date.parse(open?.mail.timestamp ?? ''),
    );
    // Every open counts, the same reader's again too.
    await (await fetch(pixel)).arrayBuffer();
    expect(await eventsOf(messageId, 'Open')).toHaveLength(2);
  });

  it('following a link answers 302 to the original URL and publishes a Click event with the link and its tags, each time', async () => {
    const { emailId, messageId, stored: body } = await send('engaged', 'ENABLED');
    const [link] = linksIn(body.html ?? '', standIn.trackingUrl) as [string];
    const response = await fetch(link, { redirect: 'manual', headers: { 'user-agent': UA } });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://acme.test/pricing?plan=pro&utm_source=email');
    const [click] = await eventsOf(messageId, 'Click');
    expect(click).toMatchObject({
      eventType: 'Click',
      mail: { messageId, tags: { email_id: [emailId], 'ses:configuration-set': ['engaged'] } },
      click: {
        ipAddress: '127.0.0.1',
        link: 'https://acme.test/pricing?plan=pro&utm_source=email',
        linkTags: { campaign: ['spring'] },
        timestamp: expect.any(String),
        userAgent: UA,
      },
    });
    // A URL in the request changes nothing: the host redirects only where the token says.
    const again = await fetch(`${link}?url=https://elsewhere.test/`, { redirect: 'manual' });
    expect(again.headers.get('location')).toBe('https://acme.test/pricing?plan=pro&utm_source=email');
    expect(await eventsOf(messageId, 'Click')).toHaveLength(2);
  });

  it('an unknown or forged token answers 404, never a redirect, and publishes nothing', async () => {
    const { messageId, stored: body } = await send('engaged', 'ENABLED');
    const base = standIn.trackingUrl;
    const pixelToken = pixelIn(body.html ?? '', base)?.split('/I0/')[1];
    for (const path of [
      '/L0/AAAAAAAAAAAAAAAAAAAAAA',
      '/I0/AAAAAAAAAAAAAAAAAAAAAA',
      `/L0/${pixelToken}`,
      '/L0/https:%2F%2Felsewhere.test',
      '/',
    ]) {
      const response = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(response.status).toBe(404);
      expect(response.headers.get('location')).toBeNull();
    }
    expect((await eventsOf(messageId)).filter((e) => ['Open', 'Click'].includes(e.eventType ?? ''))).toEqual(
      [],
    );
  });

  it('with tracking ENABLED on a set without an OPEN or CLICK destination: the pixel and links work, no Open or Click is published', async () => {
    const { messageId, stored: body } = await send('sends-only', 'ENABLED');
    const pixel = pixelIn(body.html ?? '', standIn.trackingUrl) as string;
    expect((await fetch(pixel)).status).toBe(200);
    const [link] = linksIn(body.html ?? '', standIn.trackingUrl) as [string];
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(302);
    expect((await eventsOf(messageId)).map((e) => e.eventType)).toEqual(['Send']);
  });

  it('a custom redirect domain is named in the links, which still lead to the local host', async () => {
    await set('branded', ['OPEN', 'CLICK'], 'track.acme.test');
    const { stored: body } = await send('branded', 'ENABLED');
    const [link] = linksIn(body.html ?? '', standIn.trackingUrl) as [string];
    expect(link).toMatch(/\?domain=track\.acme\.test$/);
    expect((await fetch(link, { redirect: 'manual' })).headers.get('location')).toBe(
      'https://acme.test/pricing?plan=pro&utm_source=email',
    );
  });

  it('a restarted local SES, with the same ledger and tracking port, still redirects links of earlier messages', async () => {
    const { messageId, stored: body } = await send('engaged', 'ENABLED');
    const [link] = linksIn(body.html ?? '', standIn.trackingUrl) as [string];
    const port = Number(new URL(standIn.trackingUrl).port);
    await standIn.stop();
    standIn = await startSesStandIn({
      ...settings(),
      emulatorEndpoint: emulators.sesEndpoint,
      sqs,
      eventsQueueUrl: eventsQueue.url,
      trackingPort: port,
    });
    expect(standIn.trackingUrl).toBe(`http://127.0.0.1:${port}`);
    const response = await fetch(link, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://acme.test/pricing?plan=pro&utm_source=email');
    expect(await eventsOf(messageId, 'Click')).toHaveLength(1);
  });
});
