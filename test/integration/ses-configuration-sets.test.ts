import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  CreateEmailIdentityCommand,
  DeleteConfigurationSetCommand,
  DeleteConfigurationSetEventDestinationCommand,
  GetConfigurationSetCommand,
  GetConfigurationSetEventDestinationsCommand,
  PutConfigurationSetDeliveryOptionsCommand,
  PutConfigurationSetSendingOptionsCommand,
  PutConfigurationSetTrackingOptionsCommand,
  SESv2Client,
  SendEmailCommand,
} from '@aws-sdk/client-sesv2';
import {
  DeleteMessageBatchCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newSesClient } from '../../functions/adapters/aws-clients.js';
import { PUBLISHED_EVENT_TYPES } from '../../functions/adapters/ses/configuration-sets.js';
import type { SesEvent } from '../../functions/adapters/ses/events.js';
import { identifyCallers } from '../../local/caller-identity.js';
import { type Emulators, startEmulators } from '../../local/emulators.js';
import { runAs } from '../../local/invocation.js';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { LOCAL_CONFIGURATION_SET, LOCAL_EVENTS_TOPIC_ARN } from '../../local/ses-configuration-sets.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';

/**
 * SES v2's configuration set API as the local SES answers it, through the SDK's own commands: the
 * shapes, SES's errors, the caller's grants, and SendEmail with a set (which must exist, and whose
 * destinations decide which events reach the events queue).
 */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let emulators: Emulators;
let sqs: SQSClient;
let eventsQueue: { url: string };
let standIn: SesStandIn;
let ses: SESv2Client;
let dataDir: string;

beforeAll(async () => {
  emulators = await startEmulators({ sesPort: 0 });
  sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials });
  eventsQueue = (
    await ensureQueueWithDlq(sqs, 'set-events', { maxReceiveCount: 3, visibilityTimeoutSeconds: 30 })
  ).queue;
  dataDir = mkdtempSync(join(tmpdir(), 'ses-sets-'));
  standIn = await startSesStandIn({
    emulatorEndpoint: emulators.sesEndpoint,
    sqs,
    eventsQueueUrl: eventsQueue.url,
    eventDelayMs: 10,
    identities: { verifyAfterMs: 0 },
    configurationSets: { file: join(dataDir, 'configuration-sets.json') },
  });
  ses = new SESv2Client({ endpoint: standIn.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: 'acme.test' }));
});
afterAll(async () => {
  await standIn.stop();
  await emulators.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: eventsQueue.url }));
});
const created: string[] = [];
afterEach(async () => {
  for (const name of created.splice(0))
    await ses.send(new DeleteConfigurationSetCommand({ ConfigurationSetName: name })).catch(() => undefined);
});

/** The error an SDK call ends in, as `<status> <name>: <message>`, or 'ok'. */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'ok',
    (e: Error & { $metadata?: { httpStatusCode?: number } }) =>
      `${e.$metadata?.httpStatusCode} ${e.name}: ${e.message}`,
  );

const createSet = async (input: ConstructorParameters<typeof CreateConfigurationSetCommand>[0]) => {
  created.push(input.ConfigurationSetName as string);
  return ses.send(new CreateConfigurationSetCommand(input));
};

/** Every event on the queue once the local SES has published what it owes (none is waited for). */
async function publishedEvents(): Promise<SesEvent[]> {
  await standIn.idle();
  const events: SesEvent[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: eventsQueue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!Messages.length) return events;
    events.push(...Messages.map((m) => JSON.parse(m.Body ?? '{}') as SesEvent));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: eventsQueue.url,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

const send = (set?: string) =>
  ses.send(
    new SendEmailCommand({
      FromEmailAddress: 'hello@acme.test',
      Destination: { ToAddresses: ['success@simulator.amazonses.com'] },
      Content: { Simple: { Subject: { Data: 'Sets' }, Body: { Text: { Data: 'Hi' } } } },
      ...(set ? { ConfigurationSetName: set } : {}),
    }),
  );

describe('configuration sets through @aws-sdk/client-sesv2', () => {
  it('creates, reads, changes and deletes a set and its event destinations, in SES’s shapes', async () => {
    expect(
      await createSet({
        ConfigurationSetName: 'acme_test-1',
        TrackingOptions: { CustomRedirectDomain: 'track.acme.test', HttpsPolicy: 'REQUIRE' },
        DeliveryOptions: { TlsPolicy: 'REQUIRE', MaxDeliverySeconds: 900 },
        Tags: [{ Key: 'domain', Value: 'acme.test' }],
      }),
    ).toMatchObject({ $metadata: { httpStatusCode: 200 } });
    const read = await ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: 'acme_test-1' }));
    expect(read).toMatchObject({
      ConfigurationSetName: 'acme_test-1',
      TrackingOptions: { CustomRedirectDomain: 'track.acme.test', HttpsPolicy: 'REQUIRE' },
      DeliveryOptions: { TlsPolicy: 'REQUIRE', MaxDeliverySeconds: 900 },
      ReputationOptions: { ReputationMetricsEnabled: false },
      SendingOptions: { SendingEnabled: true },
      Tags: [{ Key: 'domain', Value: 'acme.test' }],
    });

    await ses.send(
      new PutConfigurationSetDeliveryOptionsCommand({
        ConfigurationSetName: 'acme_test-1',
        TlsPolicy: 'OPTIONAL',
        MaxDeliverySeconds: 3600,
      }),
    );
    // Without CustomRedirectDomain, the set goes back to SES's own tracking domain.
    await ses.send(new PutConfigurationSetTrackingOptionsCommand({ ConfigurationSetName: 'acme_test-1' }));
    const changed = await ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: 'acme_test-1' }));
    expect(changed.DeliveryOptions).toEqual({ TlsPolicy: 'OPTIONAL', MaxDeliverySeconds: 3600 });
    expect(changed.TrackingOptions).toBeUndefined();

    const destination = {
      Enabled: true,
      MatchingEventTypes: ['SEND', 'DELIVERY', 'OPEN', 'CLICK'] as const,
      SnsDestination: { TopicArn: LOCAL_EVENTS_TOPIC_ARN },
    };
    await ses.send(
      new CreateConfigurationSetEventDestinationCommand({
        ConfigurationSetName: 'acme_test-1',
        EventDestinationName: 'to-sns',
        EventDestination: { ...destination, MatchingEventTypes: [...destination.MatchingEventTypes] },
      }),
    );
    expect(
      await outcome(
        ses.send(
          new CreateConfigurationSetEventDestinationCommand({
            ConfigurationSetName: 'acme_test-1',
            EventDestinationName: 'to-sns',
            EventDestination: { ...destination, MatchingEventTypes: ['BOUNCE'] },
          }),
        ),
      ),
    ).toBe('400 AlreadyExistsException: Event destination to-sns already exists.');
    expect(
      (
        await ses.send(
          new GetConfigurationSetEventDestinationsCommand({ ConfigurationSetName: 'acme_test-1' }),
        )
      ).EventDestinations,
    ).toEqual([
      {
        Name: 'to-sns',
        Enabled: true,
        MatchingEventTypes: ['SEND', 'DELIVERY', 'OPEN', 'CLICK'],
        SnsDestination: { TopicArn: LOCAL_EVENTS_TOPIC_ARN },
      },
    ]);
    await ses.send(
      new DeleteConfigurationSetEventDestinationCommand({
        ConfigurationSetName: 'acme_test-1',
        EventDestinationName: 'to-sns',
      }),
    );
    expect(
      (
        await ses.send(
          new GetConfigurationSetEventDestinationsCommand({ ConfigurationSetName: 'acme_test-1' }),
        )
      ).EventDestinations,
    ).toEqual([]);
    expect(
      await outcome(
        ses.send(
          new DeleteConfigurationSetEventDestinationCommand({
            ConfigurationSetName: 'acme_test-1',
            EventDestinationName: 'to-sns',
          }),
        ),
      ),
    ).toBe('404 NotFoundException: Event destination to-sns does not exist.');

    await ses.send(new DeleteConfigurationSetCommand({ ConfigurationSetName: 'acme_test-1' }));
    expect(
      await outcome(ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: 'acme_test-1' }))),
    ).toBe('404 NotFoundException: Configuration set acme_test-1 does not exist.');
  });

  it('answers AlreadyExistsException for a second set of the same name, BadRequestException for a bad name or option', async () => {
    await createSet({ ConfigurationSetName: 'twice' });
    expect(await outcome(createSet({ ConfigurationSetName: 'twice' }))).toBe(
      '400 AlreadyExistsException: Configuration set twice already exists.',
    );
    for (const name of ['has space', 'dot.ted', 'x'.repeat(65), ''])
      expect(await outcome(createSet({ ConfigurationSetName: name }))).toMatch(/^400 BadRequestException: /);
    expect(await outcome(createSet({ ConfigurationSetName: 'x'.repeat(64) }))).toBe('ok');
    // SES takes a maximum delivery time from 5 minutes to 14 hours.
    expect(
      await outcome(
        createSet({ ConfigurationSetName: 'quick', DeliveryOptions: { MaxDeliverySeconds: 60 } }),
      ),
    ).toMatch(/^400 BadRequestException: /);
    expect(
      await outcome(
        createSet({ ConfigurationSetName: 'tls', DeliveryOptions: { TlsPolicy: 'SOMETIMES' as never } }),
      ),
    ).toMatch(/^400 BadRequestException: /);
  });

  it('refuses a custom redirect domain SES has not verified (BadRequestException), on create and on put; one under a verified domain is taken', async () => {
    const refused = (domain: string) =>
      `400 BadRequestException: Domain <${domain}> is not verified under this account.`;
    const tracking = (domain: string) => ({ CustomRedirectDomain: domain, HttpsPolicy: 'REQUIRE' as const });
    expect(
      await outcome(
        createSet({ ConfigurationSetName: 'unverified', TrackingOptions: tracking('links.stranger.test') }),
      ),
    ).toBe(refused('links.stranger.test'));
    await createSet({ ConfigurationSetName: 'tracked' });
    const put = (domain: string) =>
      outcome(
        ses.send(
          new PutConfigurationSetTrackingOptionsCommand({
            ConfigurationSetName: 'tracked',
            ...tracking(domain),
          }),
        ),
      );
    expect(await put('links.stranger.test')).toBe(refused('links.stranger.test'));
    // An identity SES has not verified yet (a .invalid domain never verifies locally) does not cover it either.
    await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: 'acme.invalid' }));
    expect(await put('links.acme.invalid')).toBe(refused('links.acme.invalid'));
    expect(
      (await ses.send(new GetConfigurationSetCommand({ ConfigurationSetName: 'tracked' }))).TrackingOptions,
    ).toBeUndefined();
    expect(await put('links.acme.test')).toBe('ok');
    expect(await put('acme.test')).toBe('ok');
  });

  it('answers NotFoundException for every call naming a set that does not exist', async () => {
    const ConfigurationSetName = 'nowhere';
    const calls = [
      () => ses.send(new GetConfigurationSetCommand({ ConfigurationSetName })),
      () => ses.send(new DeleteConfigurationSetCommand({ ConfigurationSetName })),
      () =>
        ses.send(
          new PutConfigurationSetDeliveryOptionsCommand({ ConfigurationSetName, TlsPolicy: 'REQUIRE' }),
        ),
      () => ses.send(new PutConfigurationSetTrackingOptionsCommand({ ConfigurationSetName })),
      () => ses.send(new GetConfigurationSetEventDestinationsCommand({ ConfigurationSetName })),
      () =>
        ses.send(
          new CreateConfigurationSetEventDestinationCommand({
            ConfigurationSetName,
            EventDestinationName: 'd',
            EventDestination: {
              Enabled: true,
              MatchingEventTypes: ['SEND'],
              SnsDestination: { TopicArn: 'arn:x' },
            },
          }),
        ),
      () =>
        ses.send(
          new DeleteConfigurationSetEventDestinationCommand({
            ConfigurationSetName,
            EventDestinationName: 'd',
          }),
        ),
    ];
    for (const call of calls)
      expect(await outcome(call())).toBe('404 NotFoundException: Configuration set nowhere does not exist.');
  });

  it('refuses a SendEmail naming a set that does not exist (NotFoundException), and one whose set has sending off', async () => {
    expect(await outcome(send('no-such-set'))).toBe(
      '404 NotFoundException: Configuration set no-such-set does not exist.',
    );
    await createSet({ ConfigurationSetName: 'paused' });
    await ses.send(
      new PutConfigurationSetSendingOptionsCommand({ ConfigurationSetName: 'paused', SendingEnabled: false }),
    );
    expect(await outcome(send('paused'))).toMatch(/^400 SendingPausedException: /);
    expect(await publishedEvents()).toEqual([]);
  });

  it("has the stack's set from the start, publishing every event type the stack's does to the events topic", async () => {
    expect(
      (
        await ses.send(
          new GetConfigurationSetEventDestinationsCommand({ ConfigurationSetName: LOCAL_CONFIGURATION_SET }),
        )
      ).EventDestinations,
    ).toEqual([
      {
        Name: 'ToSns',
        Enabled: true,
        MatchingEventTypes: [...PUBLISHED_EVENT_TYPES],
        SnsDestination: { TopicArn: LOCAL_EVENTS_TOPIC_ARN },
      },
    ]);
    const { MessageId } = await send(LOCAL_CONFIGURATION_SET);
    const events = (await publishedEvents()).filter((e) => e.mail.messageId === MessageId);
    expect(events.map((e) => e.eventType).sort()).toEqual(['Delivery', 'Send']);
  });

  it('publishes only the event types an enabled destination to the events topic matches; no destination, no events', async () => {
    await createSet({ ConfigurationSetName: 'deliveries' });
    const add = (
      name: string,
      types: ('SEND' | 'DELIVERY')[],
      enabled: boolean,
      topic = LOCAL_EVENTS_TOPIC_ARN,
    ) =>
      ses.send(
        new CreateConfigurationSetEventDestinationCommand({
          ConfigurationSetName: 'deliveries',
          EventDestinationName: name,
          EventDestination: {
            Enabled: enabled,
            MatchingEventTypes: types,
            SnsDestination: { TopicArn: topic },
          },
        }),
      );
    const bare = await send('deliveries');
    expect((await publishedEvents()).filter((e) => e.mail.messageId === bare.MessageId)).toEqual([]);

    await add('delivery', ['DELIVERY'], true);
    // Disabled, or to a topic nothing on this machine subscribes to: nothing reaches the queue.
    await add('sends-off', ['SEND'], false);
    await add('elsewhere', ['SEND'], true, 'arn:aws:sns:us-east-1:000000000000:someone-elses');
    const { MessageId } = await send('deliveries');
    const events = (await publishedEvents()).filter((e) => e.mail.messageId === MessageId);
    expect(events.map((e) => e.eventType)).toEqual(['Delivery']);
    expect(events[0]?.mail.tags?.['ses:configuration-set']).toEqual(['deliveries']);
  });

  it('without a set: no events, as before', async () => {
    await send();
    expect(await publishedEvents()).toEqual([]);
  });

  it("refuses a call the calling function's role does not grant (403 AccessDeniedException); a call naming no function is allowed", async () => {
    const stop = identifyCallers();
    const saved = { ...process.env };
    try {
      Object.assign(process.env, {
        AWS_ENDPOINT_URL_SESV2: standIn.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      });
      const asFunction = newSesClient();
      expect(
        await outcome(
          runAs('send-email', () =>
            asFunction.send(new CreateConfigurationSetCommand({ ConfigurationSetName: 'not-mine' })),
          ),
        ),
      ).toMatch(
        /^403 AccessDeniedException: User: arn:aws:sts::000000000000:assumed-role\/send-email\/send-email is not authorized to perform: ses:CreateConfigurationSet /,
      );
      expect(
        await outcome(
          runAs('send-email', () =>
            asFunction.send(
              new GetConfigurationSetCommand({ ConfigurationSetName: LOCAL_CONFIGURATION_SET }),
            ),
          ),
        ),
      ).toMatch(/^403 AccessDeniedException: .*ses:GetConfigurationSet /);
      expect(
        await outcome(
          asFunction.send(new GetConfigurationSetCommand({ ConfigurationSetName: LOCAL_CONFIGURATION_SET })),
        ),
      ).toBe('ok');
    } finally {
      stop();
      process.env = saved;
    }
  });

  it('keeps the sets in their file: a restarted local SES still has them', async () => {
    await createSet({ ConfigurationSetName: 'kept', DeliveryOptions: { TlsPolicy: 'REQUIRE' } });
    const again = await startSesStandIn({
      emulatorEndpoint: emulators.sesEndpoint,
      sqs,
      eventsQueueUrl: eventsQueue.url,
      configurationSets: { file: join(dataDir, 'configuration-sets.json') },
    });
    try {
      const client = new SESv2Client({ endpoint: again.endpoint, region: 'us-east-1', credentials });
      expect(
        (await client.send(new GetConfigurationSetCommand({ ConfigurationSetName: 'kept' }))).DeliveryOptions,
      ).toEqual({ TlsPolicy: 'REQUIRE' });
      client.destroy();
    } finally {
      await again.stop();
    }
  });
});
