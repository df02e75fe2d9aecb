/**
 * What a user's code does to receive mail with the official `resend` package, against `npm start`:
 * a domain with receiving enabled, a webhook for `email.received`, a message sent to the local
 * inbound SMTP endpoint (INBOUND_SMTP_URL) by nodemailer, as any mail server would, then the
 * received email read back, its attachment downloaded, and the email forwarded both ways. Run by
 * test/e2e/receiving.test.ts in its own process; prints one JSON line with what it saw.
 */
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { must, startHookReceiver, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const storeUrl = process.env.SES_STORE_URL as string;
const smtp = new URL(process.env.INBOUND_SMTP_URL as string);
const seen: Record<string, unknown> = {};

const receiver = await startHookReceiver('/inbound');
const webhook = must(
  await resend.webhooks.create({ endpoint: receiver.url, events: ['email.received'] }),
  'webhooks.create',
);

// A domain that receives (and sends: forward() sends from it), and one that only sends.
const domain = must(
  await resend.domains.create({ name: 'inbox.test', capabilities: { receiving: 'enabled' } }),
  'domains.create',
);
seen.domain = domain;
must(await resend.domains.create({ name: 'plain.test' }), 'domains.create (no receiving)');
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the receiving domain to be verified',
);
seen.domainRecords = must(await resend.domains.get(domain.id), 'domains.get').records;

// Another mail server's view: the local inbound endpoint, plain SMTP on 127.0.0.1.
const transport = nodemailer.createTransport({ host: smtp.hostname, port: Number(smtp.port), secure: false });
const attachment = randomBytes(150 * 1024);
const message = {
  from: 'Sender <sender@outside.test>',
  to: 'Hello <hello@inbox.test>',
  cc: 'team@inbox.test',
  subject: 'Quarterly report',
  text: 'The report is attached.',
  html: '<p>The report is <b>attached</b>.</p>',
  messageId: '<q3-report@outside.test>',
  inReplyTo: '<q2-report@inbox.test>',
  references: ['<q1-report@inbox.test>', '<q2-report@inbox.test>'],
  attachments: [{ filename: 'report.bin', content: attachment, contentType: 'application/octet-stream' }],
};
// The receipt rules follow a domain through a queue and one writer: until they hold it, SES (and
// its twin) refuses its recipients with 550, as a sending server would see.
const sent = await until(
  () =>
    transport.sendMail(message).then(
      (info) => ({ info, error: undefined }),
      (error: { responseCode?: number; response?: string }) => ({ info: undefined, error }),
    ),
  (result) => result.info !== undefined || result.error?.responseCode !== 550,
  'the receipt rules to take inbox.test',
);
if (!sent.info) throw new Error(`the message was refused: ${JSON.stringify(sent.error)}`);
seen.smtpResponse = sent.info.response;

// Mail to a domain without receiving is refused during the conversation.
seen.refused = await transport.sendMail({ ...message, to: 'someone@plain.test', cc: undefined }).then(
  () => null,
  (error: { responseCode?: number; response?: string; rejected?: string[] }) => ({
    responseCode: error.responseCode,
    response: error.response,
    rejected: error.rejected,
  }),
);

// The webhook, verified as Resend's docs say.
const hook = await until(
  async () => receiver.hooks.find((h) => JSON.parse(h.body).type === 'email.received'),
  (h) => h !== undefined,
  'an email.received webhook',
);
if (!hook) throw new Error('no webhook');
seen.hook = JSON.parse(hook.body);
try {
  resend.webhooks.verify({
    payload: hook.body,
    headers: {
      id: hook.headers['svix-id'] as string,
      timestamp: hook.headers['svix-timestamp'] as string,
      signature: hook.headers['svix-signature'] as string,
    },
    webhookSecret: webhook.signing_secret,
  });
  seen.hookVerified = true;
} catch {
  seen.hookVerified = false;
}
const emailId = (seen.hook as { data: { email_id: string } }).data.email_id;

// Reading it back with the SDK.
seen.get = must(await resend.emails.receiving.get(emailId), 'emails.receiving.get');
seen.list = must(await resend.emails.receiving.list({ limit: 10 }), 'emails.receiving.list');
const attachments = must(
  await resend.emails.receiving.attachments.list({ emailId }),
  'emails.receiving.attachments.list',
);
seen.attachments = attachments;
const first = attachments.data[0];
if (!first) throw new Error('no attachment listed');
const one = must(
  await resend.emails.receiving.attachments.get({ emailId, id: first.id }),
  'emails.receiving.attachments.get',
);
seen.attachment = one;
const download = await fetch(one.download_url);
seen.download = {
  status: download.status,
  // What the link asks S3 to answer it with (the local S3 does not echo it; S3 does).
  disposition: new URL(one.download_url).searchParams.get('response-content-disposition'),
  equal: Buffer.from(await download.arrayBuffer()).equals(attachment),
};

// Forwarding, both ways; each forward is an email sent through the service, to the simulator.
const forwarded = must(
  await resend.emails.receiving.forward({
    emailId,
    to: 'success@simulator.amazonses.com',
    from: 'Forwarder <forward@inbox.test>',
  }),
  'emails.receiving.forward (passthrough)',
);
const wrapped = must(
  await resend.emails.receiving.forward({
    emailId,
    to: 'success@simulator.amazonses.com',
    from: 'Forwarder <forward@inbox.test>',
    passthrough: false,
    text: 'See the message below.',
  }),
  'emails.receiving.forward (wrapped)',
);
for (const [name, id] of [
  ['forwardedEmail', forwarded.id],
  ['wrappedEmail', wrapped.id],
] as const)
  seen[name] = await until(
    async () => must(await resend.emails.get(id), 'emails.get'),
    (e) => e.last_event === 'delivered',
    `the ${name} to be delivered`,
  );

// What the local SES took for them.
const { emails } = (await (await fetch(storeUrl)).json()) as {
  emails: {
    subject: string;
    body: { html?: string; text?: string };
    attachments?: { filename?: string; contentType: string; content: string }[];
  }[];
};
seen.stored = emails.map((e) => ({
  subject: e.subject,
  text: e.body.text,
  html: e.body.html,
  attachments: (e.attachments ?? []).map((a) => ({
    filename: a.filename,
    contentType: a.contentType,
    equalsOriginal: Buffer.from(a.content, 'base64').equals(attachment),
  })),
}));

receiver.close();
transport.close();
console.log(JSON.stringify(seen));
