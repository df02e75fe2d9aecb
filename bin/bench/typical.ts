/**
 * A typical first request for every function, against the local service: what a cold start of
 * that function on Lambda would most often be asked. `npm run bench` (section 1) runs each built
 * function in a fresh process on its typical request, so code a function defers but every request
 * needs is counted (bytes and time) where it is paid.
 */
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { FunctionName } from '../../functions/catalog.js';
import { FALLBACK_HANDLER, ROUTES } from '../../functions/routes.js';
import type { Delivery } from '../../functions/webhooks/model.js';
import { type LocalService, scheduledEvent } from '../../local/service.js';
import { httpEvent, sqsEvent } from '../../test/support/events.js';
import { httpsClient } from '../../test/support/https.js';
import { receipt } from './receipt.js';

type Api = ReturnType<typeof httpsClient>['call'];

/** What the typical requests refer to, made once through the local service's API. */
export interface Fixtures {
  api: Api;
  token: string;
  domainId: string;
  /** A delivered email with one attachment. */
  emailId: string;
  attachmentId: string;
  templateId: string;
  webhookId: string;
  webhookEventId: string;
  keyId: string;
  suppressed: string;
  logId: string;
  consoleAsset: string;
  /** A webhook receiver on this machine (the local service allows loopback endpoints). */
  receiverUrl: string;
  /** A send queue message (of an email queued by the bundled send-email) for the consumer. */
  sendMessage: () => Promise<string>;
  /** One request-log line as an API function writes it. */
  requestLogLine: string;
}

let unique = 0;
const next = () => `${Date.now().toString(36)}${++unique}`;

/** An API Gateway event for a route, its `{…}` parameters filled in. */
function http(
  fx: Fixtures,
  handler: string,
  options: { params?: Record<string, string>; body?: unknown; query?: Record<string, string> } = {},
): APIGatewayProxyEventV2 {
  const route = ROUTES.find((r) => r.handler === handler);
  const method = route?.method ?? 'GET';
  const template = route?.path ?? '/v1/nothing-here';
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = options.params?.[name];
    if (value === undefined) throw new Error(`${handler}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  return httpEvent({
    method,
    path,
    routeKey: route ? `${method} ${template}` : '$default',
    token: route?.permission === 'public' || route?.permission === 'token' ? null : fx.token,
    body: options.body,
    query: options.query,
    pathParameters: options.params,
  });
}

/** Calls the local service's API, and fails loudly unless it answers 2xx. */
async function must(api: Api, method: string, path: string, body?: unknown) {
  const response = await api(method, path, { body });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.json;
}

/** A new contact's id (contacts). */
const newContact = async (fx: Fixtures): Promise<string> =>
  (await must(fx.api, 'POST', '/contacts', { email: `bench-${next()}@example.com` })).id;

/** A new audience (a segment). */
const newAudience = async (fx: Fixtures): Promise<string> =>
  (await must(fx.api, 'POST', '/segments', { name: `Bench ${next()}` })).id;

/** An audience and a contact in it: the audience routes' parameters. */
async function audienceContact(fx: Fixtures) {
  const id = await newAudience(fx);
  const contact = await must(fx.api, 'POST', '/contacts', {
    email: `bench-${next()}@example.com`,
    segments: [id],
  });
  return { id, contact_id: String(contact.id) };
}

const scheduled = async (fx: Fixtures) =>
  (
    await must(fx.api, 'POST', '/emails', {
      ...receipt(unique++),
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    })
  ).id as string;

const sesEvent = (emailId: string) =>
  readFileSync(new URL('../../test/fixtures/ses-event-open.json', import.meta.url), 'utf8').replaceAll(
    '__EMAIL_ID__',
    emailId,
  );

/** A well-formed received email id (a UUIDv7) that no received email has. */
const NO_RECEIVED_EMAIL = '019ab2c4-7d1e-7a3f-9c2b-5e8d0f1a2b3c';

/** A new segment, through the API. */
const segment = async (fx: Fixtures) =>
  (await must(fx.api, 'POST', '/segments', { name: `Bench ${next()}` })).id as string;

/** A new contact, through the API: its address. */
const contact = async (fx: Fixtures) => {
  const email = `contact${next()}@example.com`;
  await must(fx.api, 'POST', '/contacts', { email });
  return email;
};

/** A new contact in a new segment. */
const member = async (fx: Fixtures) => {
  const [email, segment_id] = await Promise.all([contact(fx), segment(fx)]);
  await must(fx.api, 'POST', `/contacts/${email}/segments/${segment_id}`);
  return { address: email, segment_id };
};
/** A contact address no contact has. */
const NO_CONTACT = 'nobody@bench.test';
/** A broadcast no one created (the bench makes none): its read, then a 404. */
const NO_BROADCAST = '019ac4d2-0000-7000-8000-000000000000';
const topic = async (fx: Fixtures) =>
  (await must(fx.api, 'POST', '/topics', { name: `T ${next()}`, default_subscription: 'opt_out' }))
    .id as string;
const property = async (fx: Fixtures) =>
  (await must(fx.api, 'POST', '/contact-properties', { key: `p_${next()}`, type: 'string' })).id as string;

/** A broadcast's body: a draft to a new segment, from the bench's sender. */
const draft = async (fx: Fixtures) => ({
  name: `Bench ${next()}`,
  segment_id: await segment(fx),
  from: receipt(unique++).from,
  subject: 'Hi {{{contact.first_name|there}}}',
  html: '<p>Hi {{{contact.first_name|there}}}</p>',
});
/** A new broadcast (a draft, unless `extra` sends it), through the API. */
const broadcast = async (fx: Fixtures, extra: Record<string, unknown> = {}) =>
  (await must(fx.api, 'POST', '/broadcasts', { ...(await draft(fx)), ...extra })).id as string;

/** Each function's typical request: the event it is invoked with (made afresh for each run). */
export const TYPICAL: Record<FunctionName, (fx: Fixtures) => Promise<unknown> | unknown> = {
  'send-email': (fx) => http(fx, 'send-email', { body: receipt(unique++) }),
  'send-batch': (fx) => http(fx, 'send-batch', { body: [receipt(unique++), receipt(unique++)] }),
  'list-emails': (fx) => http(fx, 'list-emails', { query: { limit: '20' } }),
  'get-email-metrics': (fx) => http(fx, 'get-email-metrics'),
  'get-usage': (fx) => http(fx, 'get-usage'),
  'get-email': (fx) => http(fx, 'get-email', { params: { id: fx.emailId } }),
  'update-email': async (fx) =>
    http(fx, 'update-email', {
      params: { id: await scheduled(fx) },
      body: { scheduled_at: new Date(Date.now() + 2 * 86_400_000).toISOString() },
    }),
  'cancel-email': async (fx) => http(fx, 'cancel-email', { params: { id: await scheduled(fx) } }),
  'share-email': (fx) => http(fx, 'share-email', { params: { id: fx.emailId }, body: { expires_in: '1h' } }),
  'get-shared-email': async (fx) => {
    const { url } = await must(fx.api, 'POST', `/emails/${fx.emailId}/share`, { expires_in: '1h' });
    return http(fx, 'get-shared-email', { params: { token: String(url).split('/share/')[1] ?? '' } });
  },
  // A token that is no token: the page answers 404 before reading the keys or the table.
  'unsubscribe-page': (fx) => http(fx, 'unsubscribe-page', { params: { token: 'not-a-token' } }),
  unsubscribe: (fx) => http(fx, 'unsubscribe', { params: { token: 'not-a-token' } }),
  'list-attachments': (fx) => http(fx, 'list-attachments', { params: { id: fx.emailId } }),
  'get-attachment': (fx) =>
    http(fx, 'get-attachment', { params: { id: fx.emailId, attachment_id: fx.attachmentId } }),
  // No received email in the bench's service (mail arrives over SMTP): an id that names none, so the
  // first request is the function's init and one read of the table (a 404).
  'list-received-emails': (fx) => http(fx, 'list-received-emails'),
  'get-received-email': (fx) => http(fx, 'get-received-email', { params: { id: NO_RECEIVED_EMAIL } }),
  'list-received-attachments': (fx) =>
    http(fx, 'list-received-attachments', { params: { id: NO_RECEIVED_EMAIL } }),
  'get-received-attachment': (fx) =>
    http(fx, 'get-received-attachment', {
      params: { id: NO_RECEIVED_EMAIL, attachment_id: NO_RECEIVED_EMAIL },
    }),
  'create-domain': (fx) => http(fx, 'create-domain', { body: { name: `d${next()}.bench.test` } }),
  'list-domains': (fx) => http(fx, 'list-domains'),
  'get-domain': (fx) => http(fx, 'get-domain', { params: { id: fx.domainId } }),
  'verify-domain': (fx) => http(fx, 'verify-domain', { params: { id: fx.domainId } }),
  'update-domain': (fx) =>
    http(fx, 'update-domain', { params: { id: fx.domainId }, body: { open_tracking: unique++ % 2 === 0 } }),
  'delete-domain': async (fx) => {
    const { id } = await must(fx.api, 'POST', '/domains', { name: `gone${next()}.bench.test` });
    return http(fx, 'delete-domain', { params: { id } });
  },
  'create-template': (fx) =>
    http(fx, 'create-template', {
      body: {
        name: `Welcome ${next()}`,
        html: '<p>Hello {{{NAME}}}</p>',
        variables: [{ key: 'NAME', type: 'string' }],
      },
    }),
  'list-templates': (fx) => http(fx, 'list-templates'),
  'create-contact-import': async (fx) => {
    const form = new FormData();
    form.append(
      'file',
      new Blob([`email\nbench-${next()}@example.com\n`], { type: 'text/csv' }),
      'contacts.csv',
    );
    const request = new Request('https://localhost/', { method: 'POST', body: form });
    const event = http(fx, 'create-contact-import', {
      body: Buffer.from(await request.arrayBuffer()).toString('base64'),
    });
    event.headers['content-type'] = request.headers.get('content-type') ?? '';
    event.isBase64Encoded = true;
    return event;
  },
  'list-contact-imports': (fx) => http(fx, 'list-contact-imports'),
  'get-contact-import': (fx) =>
    http(fx, 'get-contact-import', { params: { id: '019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b12' } }),
  'create-contact-import-upload': (fx) => http(fx, 'create-contact-import-upload'),
  'import-contacts': () =>
    sqsEvent([{ body: JSON.stringify({ import_id: '019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b12' }) }]),
  'get-template': (fx) => http(fx, 'get-template', { params: { id: fx.templateId } }),
  'update-template': (fx) =>
    http(fx, 'update-template', { params: { id: fx.templateId }, body: { subject: `Hello ${next()}` } }),
  'delete-template': async (fx) => {
    const { id } = await must(fx.api, 'POST', '/templates', { name: 'Gone', html: '<p>x</p>' });
    return http(fx, 'delete-template', { params: { id } });
  },
  'create-contact': (fx) => http(fx, 'create-contact', { body: { email: `bench-${next()}@example.com` } }),
  'list-contacts': (fx) => http(fx, 'list-contacts'),
  'get-contact': async (fx) => http(fx, 'get-contact', { params: { id: await newContact(fx) } }),
  'update-contact': async (fx) =>
    http(fx, 'update-contact', { params: { id: await newContact(fx) }, body: { first_name: 'Ada' } }),
  'delete-contact': async (fx) => http(fx, 'delete-contact', { params: { id: await newContact(fx) } }),
  'create-audience-contact': async (fx) =>
    http(fx, 'create-audience-contact', {
      params: { id: await newAudience(fx) },
      body: { email: `bench-${next()}@example.com` },
    }),
  'list-audience-contacts': async (fx) =>
    http(fx, 'list-audience-contacts', { params: { id: await newAudience(fx) } }),
  'get-audience-contact': async (fx) =>
    http(fx, 'get-audience-contact', { params: await audienceContact(fx) }),
  'update-audience-contact': async (fx) =>
    http(fx, 'update-audience-contact', { params: await audienceContact(fx), body: { last_name: 'L' } }),
  'delete-audience-contact': async (fx) =>
    http(fx, 'delete-audience-contact', { params: await audienceContact(fx) }),
  'publish-template': (fx) => http(fx, 'publish-template', { params: { id: fx.templateId } }),
  'duplicate-template': (fx) => http(fx, 'duplicate-template', { params: { id: fx.templateId } }),
  'create-api-key': (fx) => http(fx, 'create-api-key', { body: { name: `key ${next()}` } }),
  'list-api-keys': (fx) => http(fx, 'list-api-keys'),
  'update-api-key': (fx) =>
    http(fx, 'update-api-key', { params: { id: fx.keyId }, body: { name: `k ${next()}` } }),
  'delete-api-key': async (fx) => {
    const { id } = await must(fx.api, 'POST', '/api-keys', { name: 'gone' });
    return http(fx, 'delete-api-key', { params: { id } });
  },
  'add-suppression': (fx) => http(fx, 'add-suppression', { body: { email: `s${next()}@example.com` } }),
  'list-suppressions': (fx) => http(fx, 'list-suppressions'),
  'get-suppression': (fx) => http(fx, 'get-suppression', { params: { id: fx.suppressed } }),
  'delete-suppression': async (fx) => {
    const email = `r${next()}@example.com`;
    await must(fx.api, 'POST', '/suppressions', { email });
    return http(fx, 'delete-suppression', { params: { id: email } });
  },
  'batch-add-suppressions': (fx) =>
    http(fx, 'batch-add-suppressions', {
      body: { emails: [`a${next()}@example.com`, `b${next()}@example.com`] },
    }),
  'batch-remove-suppressions': async (fx) => {
    const emails = [`c${next()}@example.com`, `d${next()}@example.com`];
    await must(fx.api, 'POST', '/suppressions/batch/add', { emails });
    return http(fx, 'batch-remove-suppressions', { body: { emails } });
  },
  'create-topic': (fx) =>
    http(fx, 'create-topic', { body: { name: `News ${next()}`, default_subscription: 'opt_in' } }),
  'list-topics': (fx) => http(fx, 'list-topics'),
  'list-broadcast-recipients': (fx) =>
    http(fx, 'list-broadcast-recipients', { params: { id: NO_BROADCAST }, query: { type: 'delivered' } }),
  'list-broadcast-clicked-links': (fx) =>
    http(fx, 'list-broadcast-clicked-links', { params: { id: NO_BROADCAST } }),
  'get-topic': async (fx) => http(fx, 'get-topic', { params: { id: await topic(fx) } }),
  'update-topic': async (fx) =>
    http(fx, 'update-topic', { params: { id: await topic(fx) }, body: { name: `News ${next()}` } }),
  'delete-topic': async (fx) => http(fx, 'delete-topic', { params: { id: await topic(fx) } }),
  // A contact no one created (the bench makes none): the contact's read, then a 404.
  'list-contact-topics': (fx) => http(fx, 'list-contact-topics', { params: { id: NO_CONTACT } }),
  'update-contact-topics': async (fx) =>
    http(fx, 'update-contact-topics', {
      params: { id: NO_CONTACT },
      body: [{ id: await topic(fx), subscription: 'opt_out' }],
    }),
  'create-contact-property': (fx) =>
    http(fx, 'create-contact-property', { body: { key: `plan_${next()}`, type: 'string' } }),
  'list-contact-properties': (fx) => http(fx, 'list-contact-properties'),
  'get-contact-property': async (fx) =>
    http(fx, 'get-contact-property', { params: { id: await property(fx) } }),
  'update-contact-property': async (fx) =>
    http(fx, 'update-contact-property', {
      params: { id: await property(fx) },
      body: { fallback_value: 'free' },
    }),
  'delete-contact-property': async (fx) =>
    http(fx, 'delete-contact-property', { params: { id: await property(fx) } }),
  'create-webhook': async (fx) => {
    // At most 50 endpoints: each run's is removed by the next.
    const listed = await must(fx.api, 'GET', '/webhooks?limit=100');
    for (const hook of listed.data as { id: string; endpoint: string }[])
      if (hook.id !== fx.webhookId) await must(fx.api, 'DELETE', `/webhooks/${hook.id}`);
    return http(fx, 'create-webhook', {
      body: { endpoint: `${fx.receiverUrl}/${next()}`, events: ['email.delivered'] },
    });
  },
  'list-webhooks': (fx) => http(fx, 'list-webhooks'),
  'get-webhook': (fx) => http(fx, 'get-webhook', { params: { id: fx.webhookId } }),
  'update-webhook': (fx) =>
    http(fx, 'update-webhook', {
      params: { id: fx.webhookId },
      body: { events: unique++ % 2 ? ['email.delivered'] : ['email.delivered', 'email.bounced'] },
    }),
  'delete-webhook': async (fx) => {
    const { id } = await must(fx.api, 'POST', '/webhooks', {
      endpoint: `${fx.receiverUrl}/${next()}`,
      events: ['email.sent'],
    });
    return http(fx, 'delete-webhook', { params: { id } });
  },
  'rotate-webhook-secret': (fx) => http(fx, 'rotate-webhook-secret', { params: { id: fx.webhookId } }),
  'list-webhook-events': (fx) => http(fx, 'list-webhook-events', { params: { id: fx.webhookId } }),
  'get-webhook-event': (fx) =>
    http(fx, 'get-webhook-event', { params: { id: fx.webhookId, event_id: fx.webhookEventId } }),
  'list-webhook-attempts': (fx) =>
    http(fx, 'list-webhook-attempts', { params: { id: fx.webhookId, event_id: fx.webhookEventId } }),
  'replay-webhook-event': (fx) =>
    http(fx, 'replay-webhook-event', { params: { id: fx.webhookId, event_id: fx.webhookEventId } }),
  // Segments (issue 40): each request on a segment (and a contact) of its own, made through the API.
  'create-segment': (fx) => http(fx, 'create-segment', { body: { name: `Segment ${next()}` } }),
  'list-segments': (fx) => http(fx, 'list-segments'),
  'get-segment': async (fx) => http(fx, 'get-segment', { params: { id: await segment(fx) } }),
  'update-segment': async (fx) =>
    http(fx, 'update-segment', { params: { id: await segment(fx) }, body: { name: `Renamed ${next()}` } }),
  'delete-segment': async (fx) => http(fx, 'delete-segment', { params: { id: await segment(fx) } }),
  'list-segment-contacts': async (fx) => {
    const { segment_id } = await member(fx);
    return http(fx, 'list-segment-contacts', { params: { id: segment_id } });
  },
  'create-audience': (fx) => http(fx, 'create-audience', { body: { name: `Audience ${next()}` } }),
  'list-audiences': (fx) => http(fx, 'list-audiences'),
  'get-audience': async (fx) => http(fx, 'get-audience', { params: { id: await segment(fx) } }),
  'delete-audience': async (fx) => http(fx, 'delete-audience', { params: { id: await segment(fx) } }),
  'list-contact-segments': async (fx) =>
    http(fx, 'list-contact-segments', { params: { id: (await member(fx)).address } }),
  'add-contact-segment': async (fx) =>
    http(fx, 'add-contact-segment', { params: { id: await contact(fx), segment_id: await segment(fx) } }),
  'remove-contact-segment': async (fx) => {
    const { address, segment_id } = await member(fx);
    return http(fx, 'remove-contact-segment', { params: { id: address, segment_id } });
  },
  // Broadcasts (issue 41): each request on a broadcast of its own, made through the API.
  'create-broadcast': async (fx) => http(fx, 'create-broadcast', { body: await draft(fx) }),
  'list-broadcasts': (fx) => http(fx, 'list-broadcasts'),
  'get-broadcast': async (fx) => http(fx, 'get-broadcast', { params: { id: await broadcast(fx) } }),
  'update-broadcast': async (fx) =>
    http(fx, 'update-broadcast', {
      params: { id: await broadcast(fx) },
      body: { subject: `News ${next()}` },
    }),
  'delete-broadcast': async (fx) => http(fx, 'delete-broadcast', { params: { id: await broadcast(fx) } }),
  'send-broadcast': async (fx) =>
    http(fx, 'send-broadcast', { params: { id: await broadcast(fx) }, body: { scheduled_at: 'in 1 day' } }),
  'cancel-broadcast': async (fx) =>
    http(fx, 'cancel-broadcast', {
      params: { id: await broadcast(fx, { send: true, scheduled_at: 'in 1 day' }) },
    }),
  'duplicate-broadcast': async (fx) =>
    http(fx, 'duplicate-broadcast', { params: { id: await broadcast(fx) } }),
  'preview-broadcast': async (fx) =>
    http(fx, 'preview-broadcast', { params: { id: await broadcast(fx) }, body: {} }),
  'list-logs': (fx) => http(fx, 'list-logs'),
  'get-log': (fx) => http(fx, 'get-log', { params: { id: fx.logId } }),
  'get-openapi': (fx) => http(fx, 'get-openapi'),
  'get-api-reference': (fx) => http(fx, 'get-api-reference'),
  'get-console': (fx) => http(fx, 'get-console'),
  'get-console-asset': (fx) => http(fx, 'get-console-asset', { params: { file: fx.consoleAsset } }),
  [FALLBACK_HANDLER]: (fx) => http(fx, FALLBACK_HANDLER),
  'process-send-queue': async (fx) => sqsEvent([{ body: await fx.sendMessage() }]),
  // The lane's consumer takes the same send job (a broadcast's carries broadcast_id).
  'process-broadcast-queue': async (fx) => sqsEvent([{ body: await fx.sendMessage() }]),
  'process-ses-events': (fx) => sqsEvent([{ body: sesEvent(fx.emailId) }]),
  'deliver-webhooks': (fx) => {
    const delivery: Delivery = {
      message_id: fx.webhookEventId,
      webhook_id: fx.webhookId,
      type: 'email.delivered',
      created_at: new Date().toISOString(),
      body: JSON.stringify({
        type: 'email.delivered',
        created_at: new Date().toISOString(),
        data: { email_id: fx.emailId },
      }),
    };
    return sqsEvent([{ body: JSON.stringify(delivery) }]);
  },
  'check-domains': () => scheduledEvent('check-domains'),
  'dispatch-scheduled': () => scheduledEvent('dispatch-scheduled'),
  'sweep-emails': () => scheduledEvent('sweep-emails'),
  'requeue-webhook-retries': () => scheduledEvent('requeue-webhook-retries'),
  'roll-up-metrics': () => scheduledEvent('roll-up-metrics'),
  // Monthly; it calls Secrets Manager itself (no local twin takes PutSecretValue yet).
  'rotate-unsubscribe-keys': () => scheduledEvent('rotate-unsubscribe-keys'),
  // Stand-ins until the parser's branch brings SES's receipt event here (issue 38).
  'receive-email': () => ({ Records: [] }),
  'sweep-received': () => scheduledEvent('sweep-received'),
  'sync-receipt-rules': () => sqsEvent([{ body: JSON.stringify({ reason: 'bench' }) }]),
  'clean-up-audience': async (fx) =>
    sqsEvent([{ body: JSON.stringify({ kind: 'segment', segment_id: await segment(fx) }) }]),
  // A step of a broadcast that does not exist: read, and dropped (the API that makes one comes with it).
  'fan-out-broadcast': () =>
    sqsEvent([
      { body: JSON.stringify({ broadcast_id: '019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b13', generation: 1 }) },
    ]),
  // A deploy's Update: rewrites our rules as they are and asks for a sync; answered to the receiver.
  'set-up-receiving': (fx) => ({
    RequestType: 'Update',
    ResponseURL: fx.receiverUrl,
    StackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/email-service-local/bench',
    RequestId: next(),
    LogicalResourceId: 'Receiving',
    ResourceType: 'Custom::Receiving',
    PhysicalResourceId: 'receiving|email-service-local-receiving|created',
    ServiceToken: 'set-up-receiving',
    ResourceProperties: {
      ServiceToken: 'set-up-receiving',
      RuleSetName: 'email-service-local-receiving',
      RulePrefix: 'email-service-local',
      BucketName: 'email-service-local-content',
      FunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:receive-email',
      SyncQueueUrl: process.env.RECEIPT_RULES_QUEUE_URL ?? '',
    },
    OldResourceProperties: {},
  }),
  'write-request-logs': async (fx) => {
    const { encodeAwslogs } = await import('../../functions/adapters/cloudwatch-logs/awslogs.js');
    return encodeAwslogs({
      messageType: 'DATA_MESSAGE',
      owner: '000000000000',
      logGroup: '/aws/lambda/list-emails',
      logStream: '2026/11/26/[$LATEST]bench',
      subscriptionFilters: ['request-logs'],
      logEvents: [{ id: next(), timestamp: Date.now(), message: fx.requestLogLine }],
    });
  },
};

/** A function's typical request, by its name (a name the catalog lacks has none). */
export const typicalOf = (name: string): ((fx: Fixtures) => Promise<unknown> | unknown) | undefined =>
  Object.hasOwn(TYPICAL, name) ? TYPICAL[name as FunctionName] : undefined;

/** Whether a function's answer is what its typical request should get (else the bench stops). */
export function answeredWell(result: unknown, name?: string): boolean {
  if (result === undefined || result === null) return true;
  const r = result as { statusCode?: number; batchItemFailures?: unknown[] };
  // The fallback's typical request is one for a path no route has.
  if (name === FALLBACK_HANDLER) return r.statusCode === 404;
  if (r.statusCode !== undefined) return r.statusCode < 300;
  if (r.batchItemFailures !== undefined) return r.batchItemFailures.length === 0;
  return true;
}

/**
 * The fixtures, through the local service's API: a verified domain, a delivered email with an
 * attachment, a published template, a webhook to a receiver with one event, a key, a suppressed
 * address, a request log, and the console's script.
 */
export async function makeFixtures(
  service: LocalService,
  options: { receiverUrl: string; sendMessage: () => Promise<string>; requestLogLine: string },
): Promise<Fixtures> {
  const client = httpsClient(service.baseUrl, service.certificate, service.apiKey);
  const api = client.call;
  const domain = await must(api, 'POST', '/domains', { name: 'acme.test' });
  await must(api, 'POST', `/domains/${domain.id}/verify`);
  const webhook = await must(api, 'POST', '/webhooks', {
    endpoint: options.receiverUrl,
    events: ['email.sent', 'email.delivered'],
  });
  const sent = await must(api, 'POST', '/emails', {
    ...receipt(0),
    attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 bench').toString('base64') }],
  });
  await service.idle();
  const attachments = await must(api, 'GET', `/emails/${sent.id}/attachments`);
  const template = await must(api, 'POST', '/templates', {
    name: 'Welcome',
    subject: 'Welcome, {{{NAME}}}',
    html: '<p>Hello {{{NAME}}}</p>',
    variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
  });
  await must(api, 'POST', `/templates/${template.id}/publish`);
  const key = await must(api, 'POST', '/api-keys', { name: 'bench' });
  const suppressed = 'bounced@example.com';
  await must(api, 'POST', '/suppressions', { email: suppressed });
  let events = await must(api, 'GET', `/webhooks/${webhook.id}/events`);
  for (let i = 0; i < 100 && !events.data.length; i++) {
    await service.idle();
    events = await must(api, 'GET', `/webhooks/${webhook.id}/events`);
  }
  if (!events.data.length) throw new Error('the webhook received no event');
  let logs = await must(api, 'GET', '/logs');
  for (let i = 0; i < 100 && !logs.data.length; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    logs = await must(api, 'GET', '/logs');
  }
  if (!logs.data.length) throw new Error('no request log was written');
  const page = await api('GET', '/../', {});
  const asset = page.text.match(/\/assets\/([\w.-]+\.js)/)?.[1];
  if (!asset) throw new Error(`the console page names no script: ${page.status}`);
  return {
    api,
    token: service.apiKey,
    domainId: domain.id,
    emailId: sent.id,
    attachmentId: attachments.data[0].id,
    templateId: template.id,
    webhookId: webhook.id,
    webhookEventId: events.data[0].id,
    keyId: key.id,
    suppressed,
    logId: logs.data[0].id,
    consoleAsset: asset,
    receiverUrl: options.receiverUrl,
    sendMessage: options.sendMessage,
    requestLogLine: options.requestLogLine,
  };
}
