import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/resend-user.ts'));
  expect(service.baseUrl).toMatch(/^https:\/\/localhost:\d+\/v1$/);
}, 150_000);
afterAll(() => stop?.());

describe('the official resend SDK, unchanged, against npm start', () => {
  it('verifies a domain with a body-less POST', () => {
    expect(seen.verify.error).toBeNull();
    expect(seen.verify.data).toMatchObject({ object: 'domain' });
  });

  it('sends with tags and headers, and follows last_event to delivered; get returns the tags as sent', () => {
    expect(seen.delivered).toMatchObject({
      object: 'email',
      status: 'delivered',
      last_event: 'delivered',
      tags: [
        { name: 'category', value: 'welcome' },
        { name: 'user_id', value: 'u-42' },
      ],
      headers: { 'X-Entity-Ref-ID': 'ref-1', 'List-Unsubscribe': '<https://sdk.test/unsubscribe>' },
    });
    expect(seen.delivered.message_id).toEqual(expect.any(String));
  });

  it("reads the email metrics with resend.emails.metrics: counted, by hour and domain, in Resend's shape", () => {
    const { metrics, metricsDefault, metricsBroadcast, domainId } = seen;
    // Our ids are TypeIDs (dom_…), Resend's UUIDs: the rest of each row fits Resend's schema.
    expectResendShape(
      { ...metrics, data: metrics.data.map((row: object) => ({ ...row, domain_id: undefined })) },
      'GetEmailsMetricsResponse',
    );
    expect(metrics).toMatchObject({
      object: 'metrics',
      granularity: 'hourly',
      dimensions: ['period', 'domain'],
      metrics: ['sent', 'delivered', 'bounced', 'bounced_permanent', 'delivery_rate', 'bounce_rate'],
    });
    const { sent, delivered, bounced, bounced_permanent, delivery_rate, bounce_rate } = metrics.totals;
    expect(sent).toBeGreaterThanOrEqual(delivered + bounced);
    expect(bounced_permanent).toBe(bounced);
    expect(delivery_rate).toBeCloseTo(delivered / sent, 4);
    expect(bounce_rate).toBeCloseTo(bounced / sent, 4);
    // Every row is the domain asked for; the hours sum to the totals.
    for (const row of metrics.data)
      expect(row).toMatchObject({ domain_id: domainId, domain_name: 'sdk.test' });
    expect(metrics.data.reduce((n: number, row: { sent: number }) => n + row.sent, 0)).toBe(sent);
    // No options: every metric over the last 6 days, no rows.
    expect(metricsDefault.error).toBeNull();
    expectResendShape(metricsDefault.data, 'GetEmailsMetricsResponse');
    expect(metricsDefault.data.data).toBeUndefined();
    expect(metricsDefault.data.totals.sent).toBeGreaterThanOrEqual(sent);
    expect(metricsBroadcast.error).toMatchObject({ statusCode: 400, name: 'validation_error' });
    expect(metricsBroadcast.error.message).toContain('email is not supported');
  });

  it('refuses a header with a line break in the error shape the SDK reads', () => {
    expect(seen.badHeader.data).toBeNull();
    expect(seen.badHeader.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(seen.badHeader.error.message).toContain('X-Evil');
  });

  it('sends a batch: ids in order, each email its own, the same ids again with the same key', () => {
    expect(seen.batch.error).toBeNull();
    const ids = seen.batch.data.data.map((e: { id: string }) => e.id);
    expect(ids).toHaveLength(2);
    expect(seen.batchAgain.data).toEqual(seen.batch.data);
    expect(
      seen.batchFinal.map((e: { id: string; subject: string; status: string; last_event: string }) => [
        e.id,
        e.subject,
        e.status,
        e.last_event,
      ]),
    ).toEqual([
      [ids[0], 'Batch 1', 'delivered', 'delivered'],
      [ids[1], 'Batch 2', 'bounced', 'bounced'],
    ]);
  });

  it('strict refuses the whole batch naming 2.to; permissive sends the valid ones and names the others', () => {
    expect(seen.batchStrict.data).toBeNull();
    expect(seen.batchStrict.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(seen.batchStrict.error.message).toContain('2.to');
    expect(seen.batchPermissive.error).toBeNull();
    expect(seen.batchPermissive.data).toMatchObject({
      data: [{ id: expect.stringMatching(/^em_/) }],
      errors: [{ index: 1, message: expect.stringContaining('1.to') }],
    });
  });

  it('pages with after across every page, and back with before, each email once', () => {
    const forward = seen.forward as string[][];
    expect(forward.length).toBeGreaterThanOrEqual(4);
    const all = forward.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...all].sort().reverse()); // newest first
    expect((seen.backward as string[][]).reverse().flat()).toEqual(all.slice(0, -1));
    expect(seen.bothCursors.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
  });

  it('creates, renames, lists and removes API keys as Resend answers them', () => {
    expect(seen.created).toMatchObject({
      object: 'api_key',
      id: expect.stringMatching(/^key_/),
      token: 'esk_',
    });
    expect(seen.renamed).toMatchObject({ data: { object: 'api_key', id: seen.created.id }, error: null });
    const listed = seen.keys.data.find((k: { id: string }) => k.id === seen.created.id);
    expect(listed).toMatchObject({ name: 'sdk key, renamed' });
    expect(seen.removed).toMatchObject({
      data: { object: 'api_key', id: seen.created.id, deleted: true },
      error: null,
    });
  });

  it('suppresses a hard-bounced address: the next email to it ends bounced and never reaches SES', async () => {
    const sup = seen.suppressions;
    expect(sup.listed).toMatchObject({
      data: { object: 'suppression', email: 'bounce+sdk@simulator.amazonses.com', origin: 'bounce' },
      error: null,
    });
    expect(sup.twice).toMatchObject({
      status: 'bounced',
      last_event: 'suppressed',
      recipients: [{ status: 'suppressed', suppressed: { reason: 'previous_bounce' } }],
    });
    // Counted at the local SES: the first email reached it, the second never did.
    const store = (await (await fetch(`${service.viewer}/store`)).json()) as {
      emails: { subject: string }[];
    };
    expect(store.emails.filter((e) => e.subject === 'Bounce once')).toHaveLength(1);
    expect(store.emails.filter((e) => e.subject === 'Bounce twice')).toHaveLength(0);
  });

  it('manages the list with the SDK: add, get by id, list by origin, batch add and remove, remove', () => {
    const sup = seen.suppressions;
    expect(sup.manual).toMatchObject({ data: { object: 'suppression', id: expect.stringMatching(/^sup_/) } });
    expect(sup.manualById.data).toMatchObject({
      email: 'someone@example.com',
      origin: 'manual',
      source_id: null,
    });
    expect(sup.byOrigin.data.object).toBe('list');
    expect(sup.byOrigin.data.data.map((e: { origin: string }) => e.origin)).toEqual(
      expect.arrayContaining(['bounce']),
    );
    expect(sup.byOrigin.data.data.every((e: { origin: string }) => e.origin === 'bounce')).toBe(true);
    expect(sup.batchAdd.data.data).toHaveLength(2);
    expect(sup.batchRemove.data.data).toEqual([
      expect.objectContaining({ email: 'a1@example.com', deleted: true }),
      expect.objectContaining({ email: 'nobody@example.com', deleted: false }),
    ]);
    expect(sup.removed).toMatchObject({ data: { object: 'suppression', deleted: true }, error: null });
    expect(sup.removedAgain.error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  it('registers a webhook and receives email.sent, email.delivered and email.bounced, each verified by resend.webhooks.verify', () => {
    expect(seen.webhookCreated).toEqual({
      object: 'webhook',
      id: expect.stringMatching(/^wh_/),
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const events = seen.webhookEvents as {
      type: string;
      data: Record<string, unknown>;
      verified: boolean;
      sameIds: boolean;
    }[];
    expect(events.map((e) => e.type).sort()).toEqual([
      'email.bounced',
      'email.delivered',
      'email.sent',
      'email.sent',
    ]);
    for (const event of events) {
      expect(event.verified, event.type).toBe(true);
      expect(event.sameIds, event.type).toBe(true);
      expect(event.data).toMatchObject({
        email_id: expect.any(String),
        created_at: expect.any(String),
        from: 'SDK <hello@sdk.test>',
        to: [expect.stringMatching(/@simulator\.amazonses\.com$/)],
        subject: expect.stringMatching(/^Hooked/),
        message_id: expect.any(String),
        tags: expect.any(Object),
      });
    }
    const delivered = events.find((e) => e.type === 'email.delivered');
    expect(delivered?.data.tags).toEqual({ flow: 'webhooks' });
    expect(events.find((e) => e.type === 'email.bounced')?.data.bounce).toMatchObject({
      type: 'Permanent',
      subType: 'General',
      message: expect.stringContaining('Permanent'),
    });
    expect(seen.domainCreated).toMatchObject({
      type: 'domain.created',
      data: { name: 'sdk.test', status: 'pending' },
    });
  });

  it('a webhook created, updated or deleted takes effect for the very next email', () => {
    expect(seen.lateWebhook).toEqual({
      afterCreate: ['email.delivered', 'email.sent'],
      // Only the bounce now; the first webhook still takes the send and the bounce.
      afterUpdate: ['email.bounced', '|', 'email.bounced', 'email.sent'],
      afterDelete: [],
    });
  });

  it('shows the webhook with its secret, lists it, and rotates: both secrets verify during the overlap', () => {
    expect(seen.webhookGet.data).toMatchObject({
      object: 'webhook',
      id: seen.webhookCreated.id,
      status: 'enabled',
      endpoint: expect.stringMatching(/^http:\/\/localhost:\d+\/resend-webhooks$/),
      signing_secret: seen.webhookCreated.signing_secret,
      events: ['email.sent', 'email.delivered', 'email.bounced', 'email.suppressed', 'domain.created'],
    });
    expect(seen.webhookList.data.data.map((w: { id: string }) => w.id)).toContain(seen.webhookCreated.id);
    expect(seen.rotation).toEqual({
      newSecretDiffers: true,
      oldVerifies: true,
      newVerifies: true,
      signatures: 2,
    });
  });

  it('lists messages with their status, shows one with its payload and attempts, and replays it under the same id', () => {
    expect(seen.webhookMessages.data.length).toBeGreaterThanOrEqual(5);
    for (const message of seen.webhookMessages.data) expect(message.id).toMatch(/^msg_/);
    expect(seen.webhookMessage.data).toMatchObject({
      object: 'webhook_event',
      type: 'email.delivered',
      status: 'success',
      next_attempt_at: null,
      payload: { type: 'email.delivered', data: { subject: 'Hooked' } },
    });
    expect(seen.webhookAttempts.data.data).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^atmpt_/),
        http_status_code: 200,
        response: 'ok',
      }),
    ]);
    expect(seen.replay.data).toEqual({ object: 'webhook_event', id: seen.webhookMessage.data.id });
    expect(seen.replayed.after).toBe(seen.replayed.before + 1);
  });

  it('publishes nothing to a disabled webhook from the next event on, and removes it', () => {
    expect(seen.disabled.data).toEqual({ object: 'webhook', id: seen.webhookCreated.id });
    expect(seen.disabledGet.data).toMatchObject({
      status: 'disabled',
      disabled_reason: expect.stringContaining('by request'),
    });
    expect(seen.whileDisabled).toEqual({ received: 0, newMessages: 0 });
    expect(seen.webhookRemoved.data).toEqual({
      object: 'webhook',
      id: seen.webhookCreated.id,
      deleted: true,
    });
    expect(seen.webhookGone.error).toMatchObject({ name: 'not_found' });
  });

  it('sends attachments given as Buffers, lists them with emails.attachments, and the link downloads the same bytes', () => {
    expect(seen.attachments.listed).toEqual([
      {
        filename: 'invoice.pdf',
        size: 70_000,
        content_type: 'application/pdf',
        content_disposition: 'attachment',
      },
      {
        filename: 'logo.png',
        size: 16,
        content_type: 'image/png',
        content_disposition: 'inline',
        content_id: 'logo',
      },
    ]);
    expect(seen.attachments.downloadStatus).toBe(200);
    expect(seen.attachments.sameBytes).toBe(true);
    expect(seen.attachments.one).toMatchObject({
      error: null,
      data: { object: 'attachment', filename: 'logo.png', download_url: expect.any(String) },
    });
  });

  it('schedules with scheduledAt, moves with emails.update, cancels with emails.cancel; sends no earlier than its time', () => {
    const { scheduling } = seen;
    expect(scheduling.answered).toMatchObject({ id: expect.stringMatching(/^em_/) });
    expect(scheduling.waiting).toMatchObject({
      status: 'queued',
      last_event: 'scheduled',
      scheduled_at: scheduling.scheduledAt,
    });
    expect(scheduling.delivered).toMatchObject({ status: 'delivered', scheduled_at: scheduling.scheduledAt });
    expect(Date.parse(scheduling.delivered.sent_at)).toBeGreaterThanOrEqual(
      Date.parse(scheduling.scheduledAt),
    );
    expect(scheduling.moved).toEqual({
      data: { object: 'email', id: scheduling.movedDelivered.id },
      error: null,
      headers: expect.anything(),
    });
    expect(scheduling.movedDelivered.scheduled_at).toBe(scheduling.movedTo);
    expect(Date.parse(scheduling.movedDelivered.sent_at)).toBeGreaterThanOrEqual(
      Date.parse(scheduling.movedTo),
    );
    expect(scheduling.canceled.data).toEqual({ object: 'email', id: scheduling.canceledGet.data.id });
    expect(scheduling.canceledGet.data).toMatchObject({
      status: 'failed',
      last_event: 'canceled',
      failure_reason: 'canceled',
      sent_at: null,
    });
    expect(scheduling.tooLate.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(scheduling.tooLate.error.message).toContain('was already sent');
    expect(scheduling.pastTime.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(scheduling.pastTime.error.message).toContain('in the past');
  });
});
