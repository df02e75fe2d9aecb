import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../functions/request-logs/model.js';
import { type NpmStart, runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

let service: NpmStart;
// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ service, seen, stop } = await runSdkProgram('test/e2e/sdk/logs-user.ts'));
}, 150_000);
afterAll(() => stop?.());

describe('the official resend SDK reads the request logs of npm start', () => {
  it('resend.logs.list() lists the requests just made, newest first, in Resend’s shape', () => {
    const { list } = seen;
    expectResendShape(list, 'ListLogsResponse');
    expect(list).toMatchObject({ object: 'list' });
    const times = list.data.map((log: { created_at: string }) => log.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    // The SDK's user agent, the key that asked, and no log of the log reads themselves.
    for (const log of list.data) {
      expect(log.user_agent).toMatch(/^resend-node:/);
      expect(log.api_key_id).toEqual(expect.any(String));
      expect(log.endpoint).not.toMatch(/^\/v1\/logs/);
    }
    expect(seen.page.data).toHaveLength(1);
    expect(Date.parse(seen.page.data[0].created_at)).toBeLessThanOrEqual(
      Date.parse(seen.webhookLog.created_at),
    );
  });

  it('resend.logs.get(id) has each request’s status and its bodies, redacted', () => {
    const { keyLog, webhookLog, missingLog } = seen;
    for (const log of [keyLog, webhookLog, missingLog]) expectResendShape(log, 'Log');
    expect(keyLog).toMatchObject({
      object: 'log',
      method: 'POST',
      endpoint: '/v1/api-keys',
      response_status: 201,
      request_body: { name: 'logs-sdk' },
      response_body: { token: REDACTED },
    });
    expect(keyLog.response_body.id).toEqual(expect.any(String));
    expect(webhookLog).toMatchObject({
      response_status: 201,
      request_body: { events: ['email.sent'] },
      response_body: { signing_secret: REDACTED },
    });
    expect(seen.missing.error).toMatchObject({ name: 'not_found' });
    expect(missingLog).toMatchObject({
      method: 'GET',
      response_status: 404,
      request_body: null,
      response_body: { name: 'not_found' },
    });
    // The secrets the SDK was given appear in no log it read.
    const everything = JSON.stringify(seen.list) + JSON.stringify([keyLog, webhookLog, missingLog]);
    expect(seen.token).toMatch(/^esk_/);
    expect(seen.signingSecret).toMatch(/^whsec_/);
    expect(everything).not.toContain(seen.token);
    expect(everything).not.toContain(seen.signingSecret);
    expect(everything).not.toContain(service.apiKey);
  });

  it('resend.logs.get of an unknown id is a 404 in the error shape', () => {
    expect(seen.unknownLog.data).toBeNull();
    expect(seen.unknownLog.error).toMatchObject({ name: 'not_found' });
  });
});
