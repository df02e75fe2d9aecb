import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStart, startNpmStart } from '../support/npm-start.js';

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'resend-sdk-'));
let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;

beforeAll(async () => {
  service = await startNpmStart({
    LOCAL_DATA_DIR: dataDir,
    PORT: '0',
    VIEWER_PORT: '0',
    RATE_LIMIT_PER_SECOND: '1000',
  });
  expect(service.baseUrl).toMatch(/^https:\/\/localhost:\d+\/v1$/);
  // The user's program, in its own process: RESEND_BASE_URL points the SDK here, and the local
  // certificate is trusted the way Node is told to trust one.
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/e2e/sdk/resend-user.ts'], {
    env: {
      ...process.env,
      RESEND_BASE_URL: service.baseUrl,
      RESEND_API_KEY: service.apiKey,
      NODE_EXTRA_CA_CERTS: join(dataDir, 'tls', 'localhost-cert.pem'),
    },
    timeout: 90_000,
  });
  seen = JSON.parse(stdout.trim().split('\n').at(-1) as string);
}, 150_000);
afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

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
});
