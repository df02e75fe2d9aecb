import { SESClient } from '@aws-sdk/client-ses';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SesReceiptRules } from '../../functions/adapters/ses/receipt-rules.js';
import type { Domain } from '../../functions/domains/model.js';
import { makeHandler } from '../../functions/handlers/sync-receipt-rules.js';
import type { ReceiptRuleView } from '../../functions/receiving/ports.js';
import { PLACEHOLDER_RECIPIENT, RuleCallPacer } from '../../functions/receiving/rules.js';
import type { CounterName } from '../../functions/shared/ports.js';
import { Account, answerAsSes } from '../support/ses-receipt-account.js';

/**
 * The receipt-rule writer: the rules follow the domains with receiving enabled, at most one SES
 * call a second, and what it saw of the active set is kept with the metric the alarm watches.
 */
const ses = mockClient(SESClient);
let account: Account;
let now: number;
let callTimes: number[];
let views: ReceiptRuleView[];
let counts: [CounterName, number | undefined][];
afterAll(() => ses.restore());

const rule = (name: string, recipients: string[]) => ({
  Name: name,
  Enabled: true,
  ScanEnabled: true,
  TlsPolicy: 'Optional' as const,
  Recipients: recipients,
  Actions: [
    { S3Action: { BucketName: 'svc-content', ObjectKeyPrefix: 'received/raw/' } },
    {
      LambdaAction: {
        FunctionArn: 'arn:aws:lambda:us-east-1:1:function:receive',
        InvocationType: 'Event' as const,
      },
    },
  ],
});
const domain = (name: string, receiving: boolean) => ({ domain: name, receiving }) as unknown as Domain;
const sqsEvent = (count = 1) =>
  ({ Records: Array.from({ length: count }, (_, i) => ({ messageId: `m${i}`, body: '{}' })) }) as SQSEvent;

function writer(domains: Domain[]) {
  const clock = { now: () => new Date(now) };
  const pacer = new RuleCallPacer(clock, async (ms) => {
    now += ms;
  });
  return makeHandler({
    domains: {
      async *all() {
        yield* domains;
      },
    },
    rules: new SesReceiptRules(new SESClient({ region: 'us-east-1' }), {
      ruleSet: 'svc-receiving',
      prefix: 'svc',
      bucket: 'svc-content',
      functionArn: 'arn:aws:lambda:us-east-1:1:function:receive',
      pace: () => pacer.turn(),
    }),
    views: { save: async (view) => void views.push(view) },
    ruleSet: 'svc-receiving',
    prefix: 'svc',
    clock,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    counters: { count: (name, value) => void counts.push([name, value]) },
  });
}

beforeEach(() => {
  now = Date.parse('2026-11-28T09:00:00Z');
  callTimes = [];
  views = [];
  counts = [];
  answerAsSes(ses, () => account);
});

/** When each SES call was made (the fake clock), from the mock's history. */
const spacing = () => {
  const times = callTimes;
  return times.slice(1).map((t, i) => t - (times[i] as number));
};

describe('sync-receipt-rules', () => {
  it('puts the receiving domains (only those) in our rule, one call a second, and says the active set holds it', async () => {
    account = new Account(
      { 'svc-receiving': [rule('svc-receive-1', [PLACEHOLDER_RECIPIENT])] },
      'svc-receiving',
    );
    // Every SES call reads the account's set: its moment, by the clock the pacer reads.
    const original = account.set.bind(account);
    account.set = (name) => {
      callTimes.push(now);
      return original(name);
    };
    const result = await writer([
      domain('a.example', true),
      domain('b.example', false),
      domain('c.example', true),
    ])(sqsEvent(3));
    expect(account.sets.get('svc-receiving')).toEqual([rule('svc-receive-1', ['a.example', 'c.example'])]);
    expect(result).toMatchObject({
      domains: 2,
      puts: 1,
      removes: 0,
      active_set: 'svc-receiving',
      ours: true,
    });
    expect(views).toEqual([
      { active_set: 'svc-receiving', ours: true, rule_set: 'svc-receiving', checked_at: expect.any(String) },
    ]);
    expect(counts).toEqual([['ReceiptRuleSetNotActive', 0]]);
    // Describe, Update, DescribeActive: a second apart at least.
    expect(callTimes).toHaveLength(3);
    for (const gap of spacing()) expect(gap).toBeGreaterThanOrEqual(1_000);
  });

  it('opens a second rule after the first past 500 domains, and removes it once they are gone', async () => {
    account = new Account(
      { 'svc-receiving': [rule('svc-receive-1', [PLACEHOLDER_RECIPIENT])] },
      'svc-receiving',
    );
    const many = Array.from({ length: 501 }, (_, i) =>
      domain(`d${String(i).padStart(3, '0')}.example`, true),
    );
    await writer(many)(sqsEvent());
    expect(account.sets.get('svc-receiving')?.map((r) => [r.Name, r.Recipients?.length])).toEqual([
      ['svc-receive-1', 500],
      ['svc-receive-2', 1],
    ]);
    await writer([])(sqsEvent());
    expect(account.sets.get('svc-receiving')).toEqual([rule('svc-receive-1', [PLACEHOLDER_RECIPIENT])]);
  });

  it('records that the active set is not ours, with the metric at 1, when someone activated another', async () => {
    account = new Account(
      { 'svc-receiving': [rule('svc-receive-1', ['a.example'])], 'their-set': [] },
      'their-set',
    );
    const result = await writer([domain('a.example', true)])(sqsEvent());
    expect(result).toMatchObject({ active_set: 'their-set', ours: false });
    expect(views[0]).toMatchObject({ active_set: 'their-set', ours: false, rule_set: 'svc-receiving' });
    expect(counts).toEqual([['ReceiptRuleSetNotActive', 1]]);
    account.active = undefined;
    await writer([domain('a.example', true)])(sqsEvent());
    expect(views[1]).toMatchObject({ active_set: null, ours: false });
  });

  it('makes our first rule again when it was deleted by hand', async () => {
    account = new Account({ 'svc-receiving': [] }, 'svc-receiving');
    await writer([domain('a.example', true)])(sqsEvent());
    expect(account.sets.get('svc-receiving')).toEqual([rule('svc-receive-1', ['a.example'])]);
  });

  it('still records what the active set is when SES refuses the rules (our set deleted by hand), then fails', async () => {
    account = new Account({ 'their-set': [] }, 'their-set');
    const run = writer([domain('a.example', true)])(sqsEvent());
    await expect(run).rejects.toThrow(/Rule set does not exist/);
    expect(views).toEqual([
      { active_set: 'their-set', ours: false, rule_set: 'svc-receiving', checked_at: expect.any(String) },
    ]);
    expect(counts).toEqual([['ReceiptRuleSetNotActive', 1]]);
  });

  it('rewrites a rule whose actions a deploy changed (left to it by the custom resource), its recipients kept', async () => {
    const stale = { ...rule('svc-receive-1', ['a.example']), Actions: [] };
    account = new Account(
      { 'svc-receiving': [stale, rule('svc-receive-2', ['b.example'])] },
      'svc-receiving',
    );
    const result = await writer([domain('a.example', true), domain('b.example', true)])(sqsEvent());
    expect(result).toMatchObject({ puts: 1, removes: 0 });
    expect(account.sets.get('svc-receiving')).toEqual([
      rule('svc-receive-1', ['a.example']),
      rule('svc-receive-2', ['b.example']),
    ]);
  });

  it('leaves a rule alone when SES describes a field the service never writes (no rewrite at every sync)', async () => {
    const described = rule('svc-receive-1', ['a.example']);
    const withExtra = {
      ...described,
      Actions: [
        {
          S3Action: {
            BucketName: 'svc-content',
            ObjectKeyPrefix: 'received/raw/',
            KmsKeyArn: 'arn:aws:kms:us-east-1:1:alias/aws/ses',
          },
        },
        described.Actions[1] as (typeof described.Actions)[1],
      ],
    };
    account = new Account({ 'svc-receiving': [withExtra] }, 'svc-receiving');
    const result = await writer([domain('a.example', true)])(sqsEvent());
    expect(result).toMatchObject({ puts: 0, removes: 0 });
  });
});
