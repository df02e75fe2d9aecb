import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.js';
import { oversizedSendConcurrency, sendConcurrencyFor } from '../../lib/send-concurrency.js';

/** The stack as `cdk synth -c …` builds it from these settings (functions not bundled). */
const synth = (context: Record<string, string>) =>
  buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } }), {
    account: '123456789012',
    region: 'us-east-1',
  }).service;

const warnings = (context: Record<string, string>) =>
  Annotations.fromStack(synth(context)).findWarning(
    '*',
    Match.stringLikeRegexp('sendConcurrency \\d+ is more than'),
  );

describe('sendConcurrency against the SES rate it serves', () => {
  it('needs what keeps the shared schedule full, twice over: a few for most accounts, hundreds only for thousands a second', () => {
    // The figures of docs/operations.md, "Sizing sendConcurrency" (batches of 10 unless said).
    expect([1, 14, 100, 500, 1_000, 5_000].map((rate) => sendConcurrencyFor(rate, 10))).toEqual([
      3, 3, 5, 17, 32, 152,
    ]);
    expect(sendConcurrencyFor(10_000, 20)).toBe(152);
    expect(sendConcurrencyFor(20_000, 20)).toBe(302);
    expect(sendConcurrencyFor(20_000, 40)).toBe(152);
  });

  it('warns at synth when the setting is far above what the declared rate needs, naming what to set', () => {
    // 100,000 emails at 14 a second take two hours at any concurrency: 200 only costs.
    const [warning] = warnings({ sendConcurrency: '200', sesSendRate: '14' });
    expect(warning?.entry.data).toMatch(
      /sendConcurrency 200 .* the 3 that SES's rate needs .*sesSendRate 14/,
    );
    expect(warning?.entry.data).toMatch(/Set sendConcurrency=3/);
    expect(() => synth({ sesSendRate: '0' })).toThrow(
      /sesSendRate must be a number of recipients per second above 0/,
    );
  }, 120_000);

  it('takes the rate declared, else the cap sesMaxSendRate, else the 100 a second the default is sized for', () => {
    const check = (settings: Partial<Parameters<typeof oversizedSendConcurrency>[0]>) =>
      oversizedSendConcurrency({ sendConcurrency: 5, sendBatchSize: 10, ...settings });
    expect(check({})).toBeUndefined();
    expect(check({ sendConcurrency: 6, sesSendRate: 14 })).toBeUndefined();
    expect(check({ sendConcurrency: 7, sesSendRate: 14 })).toMatch(/the 3 that/);
    expect(check({ sendConcurrency: 50, sesMaxSendRate: 100 })).toMatch(/sesMaxSendRate 100/);
    expect(check({ sendConcurrency: 50, sesMaxSendRate: 100, sesSendRate: 1_000 })).toBeUndefined();
    expect(check({ sendConcurrency: 10 })).toBeUndefined();
    expect(check({ sendConcurrency: 11 })).toMatch(/no rate is declared.*sesSendRate=/);
    // The recommended settings for 10,000 a second, at SES's 20,000.
    expect(check({ sendConcurrency: 300, sendBatchSize: 20, sesSendRate: 20_000 })).toBeUndefined();
  });
});
