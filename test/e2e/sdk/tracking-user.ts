/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`,
 * NODE_EXTRA_CA_CERTS trusts the local certificate) that turns tracking on for its domain, sends
 * an HTML email with links, and follows its opens and clicks. The reader is played by fetching the
 * message as the local SES stored it (the viewer's JSON at SES_STORE_URL): its pixel and one of
 * its links, as a mail client would. Run by test/e2e/tracking.test.ts; prints one JSON line.
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
  await resend.webhooks.create({ endpoint: hookUrl, events: ['email.opened', 'email.clicked'] }),
  'webhooks.create',
);
seen.signingSecret = webhook.signing_secret;

const domain = must(await resend.domains.create({ name: 'track.test' }), 'domains.create');
seen.created = domain;
await until(
  async () => must(await resend.domains.get(domain.id), 'domains.get'),
  (d) => d.status === 'verified',
  'the domain to be verified',
);
seen.updated = must(
  await resend.domains.update({ id: domain.id, openTracking: true, clickTracking: true }),
  'domains.update',
);
seen.tracked = must(await resend.domains.get(domain.id), 'domains.get');

/** Sends an HTML email with two links and an untracked one; returns its id once delivered. */
const send = async (subject: string) => {
  const { id } = must(
    await resend.emails.send({
      from: 'Track <news@track.test>',
      to: 'reader@example.com',
      subject,
      html:
        '<html><body><p>Hello</p>' +
        '<a href="https://track.test/pricing?plan=pro">Pricing</a> ' +
        '<a href="https://track.test/docs">Docs</a> ' +
        '<a ses:no-track href="https://track.test/unsubscribe">Unsubscribe</a>' +
        '</body></html>',
      text: 'Hello https://track.test/pricing',
    }),
    'emails.send',
  );
  await until(
    async () => must(await resend.emails.get(id), 'emails.get'),
    (e) => e.last_event === 'delivered',
    `${subject} to be delivered`,
  );
  return id;
};

/** The message as the local SES stored it (what the reader's mail client receives). */
const stored = async (subject: string) => {
  const { emails } = (await (await fetch(storeUrl)).json()) as {
    emails: { subject: string; body: { html?: string; text?: string } }[];
  };
  const message = emails.find((e) => e.subject === subject);
  if (!message) throw new Error(`no stored message "${subject}"`);
  return message.body;
};
const hrefs = (html: string) => [...html.matchAll(/<a\b[^>]*\bhref="([^"]+)"/g)].map((m) => m[1] as string);
const images = (html: string) => [...html.matchAll(/<img\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1] as string);

const id = await send('Tracked');
seen.emailId = id;
const body = await stored('Tracked');
seen.stored = {
  html: body.html,
  text: body.text,
  hrefs: hrefs(body.html ?? ''),
  images: images(body.html ?? ''),
};

// The reader opens the email (the client loads the pixel) and follows the first link.
const [pixel] = images(body.html ?? '');
const opened = await fetch(pixel as string, {
  headers: { 'user-agent': 'Mozilla/5.0 (Macintosh) Thunderbird/128.0' },
});
seen.pixel = {
  status: opened.status,
  type: opened.headers.get('content-type'),
  bytes: (await opened.arrayBuffer()).byteLength,
};
const [link] = hrefs(body.html ?? '');
const followed = await fetch(link as string, {
  redirect: 'manual',
  headers: { 'user-agent': 'Mozilla/5.0 (Macintosh) Thunderbird/128.0' },
});
seen.click = { status: followed.status, location: followed.headers.get('location') };
// A forged token redirects nowhere.
const forged = await fetch(`${new URL(link as string).origin}/L0/not-a-token`, { redirect: 'manual' });
seen.forged = { status: forged.status, location: forged.headers.get('location') };

seen.clicked = await until(
  async () => must(await resend.emails.get(id), 'emails.get'),
  (e) => e.last_event === 'clicked',
  'last_event clicked',
);
await until(
  async () => hooks,
  (h) => ['email.opened', 'email.clicked'].every((t) => h.some((x) => JSON.parse(x.body).type === t)),
  'the opened and clicked webhooks',
);
seen.hooks = hooks;

// TLS enforced and a tracking subdomain: the domain's own configuration set; sends go on.
seen.strict = must(
  await resend.domains.update({ id: domain.id, tls: 'enforced', trackingSubdomain: 'links' }),
  'domains.update (tls, tracking subdomain)',
);
seen.strictDomain = must(await resend.domains.get(domain.id), 'domains.get');
seen.list = must(await resend.domains.list(), 'domains.list');
await send('Tracked through the tracking subdomain');
seen.strictStored = hrefs((await stored('Tracked through the tracking subdomain')).html ?? '');
seen.refused = await resend.domains.update({ id: domain.id, capabilities: { sending: 'disabled' } } as never);

receiver.close();
console.log(JSON.stringify(seen));
