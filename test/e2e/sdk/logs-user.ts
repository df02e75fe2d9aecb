/**
 * A user's program with the official `resend` package (RESEND_BASE_URL points it at `npm start`)
 * that makes a few requests, among them two whose answers hold secrets (a new API key's token, a
 * webhook's signing secret) and one that fails, then reads them back with `resend.logs.list()` and
 * `resend.logs.get(id)`. Run by test/e2e/request-logs-sdk.test.ts; prints one JSON line.
 */
import { Resend } from 'resend';
import { must, startHookReceiver, until } from './user-kit.js';

const resend = new Resend(process.env.RESEND_API_KEY);
const seen: Record<string, unknown> = {};

const receiver = await startHookReceiver();
const key = must(await resend.apiKeys.create({ name: 'logs-sdk' }), 'apiKeys.create');
seen.token = key.token;
const webhook = must(
  await resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent'] }),
  'webhooks.create',
);
seen.signingSecret = webhook.signing_secret;
seen.missing = await resend.domains.get('dom_0000000000000000000000000a');
receiver.close();

const find = (logs: { id: string; endpoint: string; method: string }[], method: string, endpoint: string) =>
  logs.find((log) => log.method === method && log.endpoint.startsWith(endpoint));
const listed = await until(
  async () => must(await resend.logs.list({ limit: 20 }), 'logs.list'),
  (list) =>
    Boolean(
      find(list.data, 'POST', '/v1/api-keys') &&
        find(list.data, 'POST', '/v1/webhooks') &&
        find(list.data, 'GET', '/v1/domains/'),
    ),
  'the requests to be logged',
);
seen.list = listed;
const idOf = (method: string, endpoint: string) => find(listed.data, method, endpoint)?.id as string;
seen.keyLog = must(await resend.logs.get(idOf('POST', '/v1/api-keys')), 'logs.get');
seen.webhookLog = must(await resend.logs.get(idOf('POST', '/v1/webhooks')), 'logs.get');
seen.missingLog = must(await resend.logs.get(idOf('GET', '/v1/domains/')), 'logs.get');
seen.unknownLog = await resend.logs.get('0190a8c2-0000-7000-8000-000000000000');
seen.page = must(await resend.logs.list({ limit: 1, after: idOf('POST', '/v1/webhooks') }), 'logs.list');

console.log(JSON.stringify(seen));
