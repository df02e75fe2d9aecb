/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`)
 * that manages templates and sends by template, alone and in a batch. Run by
 * test/e2e/templates.test.ts; prints one JSON line with what it saw (and what the local SES stored,
 * read from SES_STORE_URL).
 */
import { Resend } from 'resend';
import { must, startHookReceiver, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const storeUrl = process.env.SES_STORE_URL as string;
const seen: Record<string, unknown> = {};

const receiver = await startHookReceiver();
const { hooks } = receiver;
const hookUrl = receiver.url;

const webhook = must(
  await resend.webhooks.create({
    endpoint: hookUrl,
    events: ['email.sent'],
  }),
  'webhooks.create',
);
seen.signingSecret = webhook.signing_secret;

const domain = must(await resend.domains.create({ name: 'tpl.test' }), 'domains.create');
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the domain to be verified',
);

const created = must(
  await resend.templates.create({
    name: 'Welcome',
    alias: 'welcome',
    from: 'Acme <hello@tpl.test>',
    subject: 'Welcome, {{{NAME}}}',
    html: '<p>Hi {{{NAME}}}, you are on {{{PLAN}}}.</p>',
    text: 'Hi {{{NAME}}}, you are on {{{PLAN}}}.',
    variables: [
      { key: 'NAME', type: 'string' },
      { key: 'PLAN', type: 'string', fallbackValue: 'Free' },
    ],
  }),
  'templates.create',
);
seen.created = created;
seen.draft = must(await resend.templates.get('welcome'), 'templates.get (alias)');
seen.unpublishedSend = await resend.emails.send({
  to: 'success@simulator.amazonses.com',
  template: { id: 'welcome', variables: { NAME: 'Ann' } },
} as never);
seen.published = must(await resend.templates.publish(created.id), 'templates.publish');

const send = async (variables: Record<string, string | number>) => {
  const { id } = must(
    await resend.emails.send({
      to: 'success@simulator.amazonses.com',
      template: { id: 'welcome', variables },
    } as never),
    'emails.send (template)',
  );
  return until(
    async () => must(await resend.emails.get(id), 'emails.get'),
    (e) => e.last_event === 'delivered',
    'the templated email to be delivered',
  );
};
seen.first = await send({ NAME: '<Ann & "Bob">' });
seen.missing = await resend.emails.send({
  to: 'success@simulator.amazonses.com',
  template: { id: 'welcome', variables: {} },
} as never);
seen.exclusive = await resend.emails.send({
  to: 'success@simulator.amazonses.com',
  html: '<p>x</p>',
  template: { id: 'welcome', variables: { NAME: 'x' } },
} as never);

// An edit makes a new version; sends keep the published one until the next publish.
must(
  await resend.templates.update(created.id, { html: '<p>Hello again {{{NAME}}}</p>' }),
  'templates.update',
);
seen.edited = must(await resend.templates.get(created.id), 'templates.get');
seen.stillPublished = await send({ NAME: 'Cy' });
must(await resend.templates.publish('welcome'), 'templates.publish (again)');
seen.republished = await send({ NAME: 'Di' });

const batch = must(
  await resend.batch.send([
    {
      to: 'success@simulator.amazonses.com',
      template: { id: created.id, variables: { NAME: 'Eve', PLAN: 'Pro' } },
    },
    { to: 'success@simulator.amazonses.com', template: { id: 'welcome', variables: { NAME: 'Fay' } } },
  ] as never),
  'batch.send (template)',
);
seen.batch = await Promise.all(
  batch.data.map(({ id }) =>
    until(
      async () => must(await resend.emails.get(id), 'emails.get'),
      (e) => e.last_event === 'delivered',
      'the batch emails to be delivered',
    ),
  ),
);

const copy = must(await resend.templates.duplicate(created.id), 'templates.duplicate');
seen.copy = must(await resend.templates.get(copy.id), 'templates.get (copy)');
seen.list = must(await resend.templates.list({ limit: 10 }), 'templates.list');
seen.removed = must(await resend.templates.remove(copy.id), 'templates.remove');
seen.gone = await resend.templates.get(copy.id);

const { emails } = (await (await fetch(storeUrl)).json()) as {
  emails: { subject: string; body: { html?: string; text?: string } }[];
};
seen.stored = emails.map((e) => ({ subject: e.subject, html: e.body.html, text: e.body.text }));
await until(
  async () => hooks,
  (h) => h.some((x) => JSON.parse(x.body).data?.template_id),
  'an email.sent webhook with template_id',
);
seen.hooks = hooks;

receiver.close();
console.log(JSON.stringify(seen));
