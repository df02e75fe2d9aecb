import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, loadConfig } from '../../functions/shared/config.js';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
  vi.resetModules();
});

describe('settings', () => {
  it('names each invalid or missing setting, what it was set to and what it may be', () => {
    process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
    delete process.env.TABLE_NAME;
    const attempt = () => loadConfig('WEBHOOK_ALLOW_LOOPBACK', 'TABLE_NAME');
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(/WEBHOOK_ALLOW_LOOPBACK is "1"; .*"true".*"false"/);
    expect(attempt).toThrow(/TABLE_NAME is not set/);
  });

  it("fails a Lambda function's init, not its requests, when a setting is invalid", async () => {
    Object.assign(process.env, {
      AWS_LAMBDA_FUNCTION_NAME: 'EmailService-CreateWebhook',
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'table',
      RATE_LIMIT_PER_SECOND: '10',
      WEBHOOK_ALLOW_LOOPBACK: '1',
    });
    await expect(import('../../functions/handlers/create-webhook.js')).rejects.toThrow(
      /WEBHOOK_ALLOW_LOOPBACK is "1"/,
    );
    vi.resetModules();
    process.env.SEND_MAX_RECEIVE_COUNT = 'five';
    await expect(import('../../functions/handlers/process-send-queue.js')).rejects.toThrow(
      /Invalid configuration: .*SEND_MAX_RECEIVE_COUNT is "five"/,
    );
  });

  it('builds a Lambda function during its init when its settings are valid', async () => {
    Object.assign(process.env, {
      AWS_LAMBDA_FUNCTION_NAME: 'EmailService-CreateWebhook',
      AWS_REGION: 'us-east-1',
      TABLE_NAME: 'table',
      RATE_LIMIT_PER_SECOND: '10',
    });
    delete process.env.WEBHOOK_ALLOW_LOOPBACK;
    const module = await import('../../functions/handlers/create-webhook.js');
    expect(typeof module.handler).toBe('function');
  });
});
