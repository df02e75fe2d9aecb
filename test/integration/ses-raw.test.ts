import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPlugins } from '../../functions/adapters/aws-clients.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { DynamoIdempotencyStore } from '../../functions/adapters/dynamodb/idempotency-store.js';
import { DynamoTemplateRepository } from '../../functions/adapters/dynamodb/template-repository.js';
import { SesIdentities } from '../../functions/adapters/ses/identities.js';
import { SesMailer } from '../../functions/adapters/ses/mailer.js';
import { generateApiKey } from '../../functions/api-keys/model.js';
import { sesAllows } from '../../functions/catalog.js';
import { acceptMime } from '../../functions/emails/accept-send.js';
import type { Mailer, SendJob } from '../../functions/emails/ports.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { makeHandler as makeConsumer } from '../../functions/handlers/process-send-queue.js';
import { systemClock } from '../../functions/shared/ports.js';
import type { Suppression } from '../../functions/suppressions/ports.js';
import { identifyCallers } from '../../local/caller-identity.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { runAs } from '../../local/invocation.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';
import { sqsEvent } from '../support/events.js';
import { MemoryContentStore, RecordingQueue } from '../support/fakes.js';
import { startTestTable, type TestTable } from '../support/table.js';

/**
 * An SMTP email through the consumer to the local SES (issue 42): sent as SES v2 raw content, as
 * the client composed it, to its recipients left after suppression; the local SES keeps the bytes it
 * got, and refuses a raw send to a role without ses:SendRawEmail as AWS does.
 */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let table: TestTable;
let emulators: Emulators;
let standIn: SesStandIn;
let ses: SESv2Client;
let stopIdentifying: () => void;

beforeAll(async () => {
  table = await startTestTable();
  emulators = await startEmulators({ sesPort: 0 });
  const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  const events = (
    await ensureQueueWithDlq(sqs, 'raw-events', { maxReceiveCount: 3, visibilityTimeoutSeconds: 1 })
  ).queue;
  standIn = await startSesStandIn({
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: events.url,
    eventDelayMs: 20,
    identities: { verifyAfterMs: 0 },
    configurationSets: { stack: ['test-set'] },
  });
  // Calls made inside runAs carry the function's name: the local SES answers as its role.
  stopIdentifying = identifyCallers();
  ses = withPlugins(new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials }));
  await new SesIdentities(ses, { region: 'us-east-1', owner: 'raw-test' }).create(
    'acme.test',
    'send.acme.test',
  );
});
afterAll(async () => {
  stopIdentifying?.();
  await standIn?.stop();
  await emulators?.stop();
  await table?.stop();
});

const DKIM =
  'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.test; s=s1;\r\n' +
  '\th=from:to:subject:list-unsubscribe; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;\r\n' +
  '\tb=dzdVyOfAKCdLXdJOc9G2q8LoXSlEniSbav+yuU4zGeeruD00lszZVoG4ZHRNiYzR\r\n';
const UNSUBSCRIBE =
  'List-Unsubscribe: <https://acme.test/u?t=abc>,\r\n <mailto:unsubscribe@acme.test?subject=u>\r\n';

/** What the SES emulator's store holds of a message, with the raw bytes the local SES adds. */
async function stored(messageId: string) {
  const { emails } = (await (await fetch(`${emulators.sesEndpoint}/store`)).json()) as {
    emails: { messageId: string; raw?: string; destination: { to: string[]; cc: string[]; bcc: string[] } }[];
  };
  return emails.find((email) => email.messageId === messageId);
}

describe('an SMTP email, sent as raw content', () => {
  it('goes to SES as the client composed it (DKIM-Signature and List-Unsubscribe byte for byte, no Bcc), to its recipients but the suppressed one', async () => {
    const emails = new DynamoEmailRepository(table.db, table.tableName);
    const content = new MemoryContentStore();
    const composed = await new MailComposer({
      from: 'Acme <hello@acme.test>',
      to: 'ann@example.test, carl@example.test',
      bcc: 'hidden@example.test',
      subject: 'Raw',
      text: 'Hello',
      html: '<p>Hello</p>',
      attachments: [{ filename: 'a.txt', content: 'file' }],
    })
      .compile()
      .build();
    const raw = new Uint8Array(Buffer.concat([Buffer.from(DKIM + UNSUBSCRIBE, 'latin1'), composed]));
    const queue = new RecordingQueue();
    const { id } = await acceptMime(
      {
        emails,
        queue,
        clock: systemClock,
        assertSenderDomain: async () => undefined,
        idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
        templates: new DynamoTemplateRepository(table.db, table.tableName),
        content,
      },
      {
        raw,
        envelope: {
          mailFrom: 'hello@acme.test',
          recipients: ['ann@example.test', 'carl@example.test', 'hidden@example.test'],
        },
        apiKey: generateApiKey('smtp', 'full_access', new Date()).key,
      },
    );
    const mailer = new SesMailer(ses, 'test-set');
    const asConsumer: Mailer = { send: (job) => runAs('process-send-queue', () => mailer.send(job)) };
    const carl = { email: 'carl@example.test', origin: 'bounce' } as Suppression;
    // Through the send queue's message and the consumer, as on AWS.
    const result = await makeConsumer({
      emails,
      mailer: asConsumer,
      clock: systemClock,
      content,
      maxReceiveCount: 3,
      suppressions: {
        find: async (addresses) =>
          new Map(
            addresses.filter((a) => a.toLowerCase() === carl.email).map((a) => [a.toLowerCase(), carl]),
          ),
      },
    })(sqsEvent([{ body: toQueueMessage(queue.jobs[0] as SendJob) }]));
    expect(result.batchItemFailures).toEqual([]);
    const messageId = (await emails.get(id))?.message_id;
    expect(messageId).toBeTruthy();
    const got = await stored(messageId ?? '');
    const sent = Buffer.from(got?.raw ?? '', 'base64').toString('latin1');
    expect(sent).toContain(DKIM);
    expect(sent).toContain(UNSUBSCRIBE);
    expect(sent).not.toMatch(/^Bcc:/im);
    // Carl still stands in the To header; SES was given him not as a recipient.
    expect(sent).toMatch(/^To: ann@example.test, carl@example.test\r$/m);
    expect(got?.destination).toEqual({ to: ['ann@example.test'], cc: [], bcc: ['hidden@example.test'] });
    // Every byte after the header, as the client sent it.
    const body = (text: string) => text.slice(text.indexOf('\r\n\r\n'));
    expect(body(sent)).toBe(body(Buffer.from(raw).toString('latin1')));
  });

  it('with Bcc recipients only, travels on the send queue and goes out to them (an API email always has a To)', async () => {
    const emails = new DynamoEmailRepository(table.db, table.tableName);
    const content = new MemoryContentStore();
    const queue = new RecordingQueue();
    const raw = new Uint8Array(
      Buffer.from('From: hello@acme.test\r\nTo: undisclosed-recipients:;\r\nSubject: Bcc only\r\n\r\nHi\r\n'),
    );
    const { id } = await acceptMime(
      {
        emails,
        queue,
        clock: systemClock,
        assertSenderDomain: async () => undefined,
        idempotency: new DynamoIdempotencyStore(table.db, table.tableName),
        templates: new DynamoTemplateRepository(table.db, table.tableName),
        content,
      },
      {
        raw,
        envelope: { mailFrom: 'hello@acme.test', recipients: ['bcc-only@example.test'] },
        apiKey: generateApiKey('smtp', 'full_access', new Date()).key,
      },
    );
    const mailer = new SesMailer(ses, 'test-set');
    const result = await makeConsumer({
      emails,
      mailer: { send: (job) => runAs('process-send-queue', () => mailer.send(job)) },
      clock: systemClock,
      content,
      maxReceiveCount: 3,
    })(sqsEvent([{ body: toQueueMessage(queue.jobs[0] as SendJob) }]));
    expect(result.batchItemFailures).toEqual([]);
    const got = await stored((await emails.get(id))?.message_id ?? '');
    expect(got?.destination).toEqual({ to: [], cc: [], bcc: ['bcc-only@example.test'] });
    expect(Buffer.from(got?.raw ?? '', 'base64').toString()).toContain('Subject: Bcc only\r\n');
  });

  it('is refused with 403 AccessDeniedException naming ses:SendRawEmail to a role without it', async () => {
    const send = (functionName: string) =>
      runAs(functionName, () =>
        ses.send(
          new SendEmailCommand({
            FromEmailAddress: 'hello@acme.test',
            Destination: { ToAddresses: ['ann@example.test'] },
            Content: { Raw: { Data: Buffer.from('From: hello@acme.test\r\nSubject: x\r\n\r\nx\r\n') } },
            ConfigurationSetName: 'test-set',
          }),
        ),
      ).then(
        () => 'sent',
        (error: Error & { $metadata?: { httpStatusCode?: number } }) =>
          `${error.$metadata?.httpStatusCode} ${error.name}: ${error.message}`,
      );
    expect(sesAllows('get-email', 'SendRawEmail')).toBe(false);
    expect(await send('get-email')).toMatch(/^403 AccessDeniedException: .*ses:SendRawEmail/);
    expect(sesAllows('process-send-queue', 'SendRawEmail')).toBe(true);
    expect(await send('process-send-queue')).toBe('sent');
  });
});
