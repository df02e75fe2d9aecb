import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateReceiptRuleCommand,
  CreateReceiptRuleSetCommand,
  DeleteReceiptRuleCommand,
  DeleteReceiptRuleSetCommand,
  InvalidS3ConfigurationException,
  LimitExceededException,
  type ReceiptRule,
  SESClient,
  SetActiveReceiptRuleSetCommand,
  UpdateReceiptRuleCommand,
} from '@aws-sdk/client-ses';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SesReceiptRuleSets, SesReceiptRules } from '../../functions/adapters/ses/receipt-rules.js';
import { makeHandler } from '../../functions/handlers/set-up-receiving.js';
import { PLACEHOLDER_RECIPIENT } from '../../functions/receiving/rules.js';
import { UPDATE_RESERVE_MS } from '../../functions/receiving/set-up.js';
import type { ReceivingProperties } from '../../functions/wiring/receiving-rules.js';
import { Account, answerAsSes } from '../support/ses-receipt-account.js';

/**
 * The receiving custom resource in its three cases (no set active, ours active, another active)
 * and its Delete, against SES's receipt-rule API as its reference documents it (the SDK's own
 * exceptions: RuleSetDoesNotExist, RuleDoesNotExist, AlreadyExists, CannotDelete, LimitExceeded),
 * answering CloudFormation by a PUT to the event's ResponseURL.
 */

const ses = mockClient(SESClient);
let account: Account;
const client = new SESClient({ region: 'us-east-1' });

const properties: ReceivingProperties = {
  RuleSetName: 'svc-receiving',
  RulePrefix: 'svc',
  BucketName: 'svc-content',
  FunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:svc-receive-email',
  SyncQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/svc-receipt-rules.fifo',
};

let syncs: string[];
/** The waits between attempts of a rule write SES refused (no real wait). */
let waits: number[];
const handler = makeHandler((props) => ({
  sets: new SesReceiptRuleSets(client),
  rulesIn: (ruleSet) =>
    new SesReceiptRules(client, {
      ruleSet,
      prefix: props.RulePrefix,
      bucket: props.BucketName,
      functionArn: props.FunctionArn,
      settle: { sleep: async (ms) => void waits.push(ms) },
    }),
  sync: { request: async (reason) => void syncs.push(reason) },
  log: { info: () => undefined, warn: () => undefined, error: () => undefined },
}));

// CloudFormation's side: the presigned ResponseURL, taking the PUT.
let server: Server;
let responseUrl: string;
const answers: { method: string; contentType: string | undefined; body: Record<string, unknown> }[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answers.push({
        method: req.method ?? '',
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  responseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cfn-response?X-Amz-Signature=x`;
});
afterAll(async () => {
  ses.restore();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  syncs = [];
  waits = [];
  answers.length = 0;
  answerAsSes(ses, () => account);
});

const event = (
  RequestType: 'Create' | 'Update' | 'Delete',
  PhysicalResourceId?: string,
): CloudFormationCustomResourceEvent =>
  ({
    RequestType,
    ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:svc-set-up-receiving',
    ResponseURL: responseUrl,
    StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/svc/guid',
    RequestId: `req-${RequestType}`,
    LogicalResourceId: 'Receiving',
    ResourceType: 'Custom::Receiving',
    ResourceProperties: { ServiceToken: 'token', ...properties },
    ...(PhysicalResourceId ? { PhysicalResourceId } : {}),
    ...(RequestType === 'Update' ? { OldResourceProperties: properties } : {}),
  }) as CloudFormationCustomResourceEvent;

const ours = (recipients: string[]): ReceiptRule => ({
  Name: 'svc-receive-1',
  Enabled: true,
  ScanEnabled: true,
  TlsPolicy: 'Optional',
  Recipients: recipients,
  Actions: [
    { S3Action: { BucketName: 'svc-content', ObjectKeyPrefix: 'received/raw/' } },
    { LambdaAction: { FunctionArn: properties.FunctionArn, InvocationType: 'Event' } },
  ],
});
const theirs: ReceiptRule = { Name: 'their-rule', Enabled: true, Recipients: ['theirs.example'] };

describe('set-up-receiving', () => {
  it('with no set active, creates ours, activates it and adds our first rule matching nothing yet', async () => {
    account = new Account();
    await handler(event('Create'));
    expect(account.active).toBe('svc-receiving');
    expect(account.sets.get('svc-receiving')).toEqual([ours([PLACEHOLDER_RECIPIENT])]);
    expect(syncs).toHaveLength(1);
    expect(answers).toEqual([
      {
        method: 'PUT',
        contentType: '',
        body: {
          Status: 'SUCCESS',
          PhysicalResourceId: 'receiving|svc-receiving|created',
          Data: { RuleSet: 'svc-receiving', CreatedRuleSet: 'true' },
          StackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/svc/guid',
          RequestId: 'req-Create',
          LogicalResourceId: 'Receiving',
        },
      },
    ]);

    // Delete: our rule, then our set, deactivated first (before us none was active).
    await handler(event('Delete', 'receiving|svc-receiving|created'));
    expect(account.active).toBeUndefined();
    expect(account.sets.has('svc-receiving')).toBe(false);
    expect(answers[1]?.body.Status).toBe('SUCCESS');
  });

  it('with ours active, keeps it and the recipients our rule already holds', async () => {
    account = new Account({ 'svc-receiving': [ours(['a.example'])] }, 'svc-receiving');
    await handler(event('Create'));
    expect(ses.commandCalls(CreateReceiptRuleSetCommand)).toHaveLength(0);
    expect(ses.commandCalls(SetActiveReceiptRuleSetCommand)).toHaveLength(0);
    expect(ses.commandCalls(CreateReceiptRuleCommand)).toHaveLength(0);
    expect(account.sets.get('svc-receiving')).toEqual([ours(['a.example'])]);
    expect(answers[0]?.body).toMatchObject({ Status: 'SUCCESS', Data: { RuleSet: 'svc-receiving' } });
  });

  it('with another set active, adds our rule first in THAT set and never replaces it; Delete takes only our rule', async () => {
    account = new Account({ 'their-set': [theirs], 'svc-receiving': [] }, 'their-set');
    await handler(event('Create'));
    expect(account.active).toBe('their-set');
    expect(account.sets.get('their-set')).toEqual([ours([PLACEHOLDER_RECIPIENT]), theirs]);
    expect(ses.commandCalls(CreateReceiptRuleCommand)[0]?.args[0].input.After).toBeUndefined();
    expect(ses.commandCalls(SetActiveReceiptRuleSetCommand)).toHaveLength(0);
    expect(answers[0]?.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'receiving|their-set|joined',
      Data: { RuleSet: 'their-set', CreatedRuleSet: 'false' },
    });

    await handler(event('Delete', 'receiving|their-set|joined'));
    expect(account.active).toBe('their-set');
    expect(account.sets.get('their-set')).toEqual([theirs]);
    expect(ses.commandCalls(DeleteReceiptRuleSetCommand)).toHaveLength(0);
    expect(ses.commandCalls(SetActiveReceiptRuleSetCommand)).toHaveLength(0);
  });

  it('on Update, changes no recipient (a deploy never resets them), rewrites the actions and asks for one sync', async () => {
    const stale = { ...ours(['a.example', 'b.example']), Actions: [] };
    account = new Account({ 'svc-receiving': [stale] }, 'svc-receiving');
    await handler(event('Update', 'receiving|svc-receiving|created'));
    expect(account.sets.get('svc-receiving')).toEqual([ours(['a.example', 'b.example'])]);
    expect(syncs).toHaveLength(1);
    expect(answers[0]?.body).toMatchObject({
      Status: 'SUCCESS',
      PhysicalResourceId: 'receiving|svc-receiving|created',
    });
  });

  it('keeps our set on Delete when others put rules of their own in it', async () => {
    account = new Account({ 'svc-receiving': [ours(['a.example']), theirs] }, 'svc-receiving');
    await handler(event('Delete', 'receiving|svc-receiving|created'));
    expect(account.sets.get('svc-receiving')).toEqual([theirs]);
    expect(account.active).toBe('svc-receiving');
  });

  it('answers FAILED with SES’s reason, and the Delete of a Create that failed touches nothing', async () => {
    account = new Account({ 'their-set': [theirs] }, 'their-set');
    account.failCreateRule = new LimitExceededException({ message: 'Maximum rules exceeded', $metadata: {} });
    await handler(event('Create'));
    expect(answers[0]?.body).toMatchObject({ Status: 'FAILED', PhysicalResourceId: 'Receiving-not-set-up' });
    expect(String(answers[0]?.body.Reason)).toContain('Maximum rules exceeded');
    ses.resetHistory();
    await handler(event('Delete', 'Receiving-not-set-up'));
    expect(ses.calls()).toHaveLength(0);
    expect(answers[1]?.body.Status).toBe('SUCCESS');
    expect(account.sets.get('their-set')).toEqual([theirs]);
  });

  const notYetWritable = () =>
    new InvalidS3ConfigurationException({
      message: 'Could not write to bucket: svc-content',
      Bucket: 'svc-content',
      $metadata: {},
    });

  it('tries a rule SES refuses the bucket for again (a bucket policy not in effect yet), then succeeds', async () => {
    account = new Account();
    // The first two CreateReceiptRule calls are refused, the third goes through.
    Object.defineProperty(account, 'failCreateRule', {
      get: () => (ses.commandCalls(CreateReceiptRuleCommand).length <= 2 ? notYetWritable() : undefined),
    });
    await handler(event('Create'));
    expect(ses.commandCalls(CreateReceiptRuleCommand)).toHaveLength(3);
    expect(waits).toEqual([2_000, 4_000]);
    expect(account.active).toBe('svc-receiving');
    expect(account.sets.get('svc-receiving')).toEqual([ours([PLACEHOLDER_RECIPIENT])]);
    expect(answers[0]?.body.Status).toBe('SUCCESS');
  });

  it('undoes a Create SES refuses for good: our set deactivated and deleted, the account as it was', async () => {
    account = new Account();
    account.failCreateRule = notYetWritable();
    await handler(event('Create'));
    expect(waits).toHaveLength(5);
    expect(answers[0]?.body).toMatchObject({ Status: 'FAILED', PhysicalResourceId: 'Receiving-not-set-up' });
    expect(String(answers[0]?.body.Reason)).toContain('Could not write to bucket');
    // As before the Create: no set active (SetActiveReceiptRuleSet without a name), no set of ours.
    expect(account.active).toBeUndefined();
    expect(ses.commandCalls(SetActiveReceiptRuleSetCommand).at(-1)?.args[0].input).toEqual({});
    expect(account.sets.size).toBe(0);
    expect(syncs).toHaveLength(0);
  });

  it('undoes a failed Create in another active set: only our rule goes, their set stays active', async () => {
    account = new Account({ 'their-set': [theirs] }, 'their-set');
    await makeHandler((props) => ({
      sets: new SesReceiptRuleSets(client),
      rulesIn: (ruleSet) =>
        new SesReceiptRules(client, {
          ruleSet,
          prefix: props.RulePrefix,
          bucket: props.BucketName,
          functionArn: props.FunctionArn,
        }),
      sync: {
        request: async () => {
          throw new Error('queue unavailable');
        },
      },
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    }))(event('Create'));
    expect(answers[0]?.body).toMatchObject({ Status: 'FAILED', PhysicalResourceId: 'Receiving-not-set-up' });
    expect(ses.commandCalls(DeleteReceiptRuleCommand)).toHaveLength(1);
    expect(account.sets.get('their-set')).toEqual([theirs]);
    expect(account.active).toBe('their-set');
    expect(ses.commandCalls(SetActiveReceiptRuleSetCommand)).toHaveLength(0);
  });

  /** Our rule N holding one domain; `stale`: with the actions of a stack before (another function). */
  const numbered = (n: number, stale: boolean): ReceiptRule => {
    const rule = { ...ours([`d${n}.example`]), Name: `svc-receive-${n}` };
    if (stale)
      rule.Actions = [
        rule.Actions?.[0] ?? {},
        { LambdaAction: { FunctionArn: `${properties.FunctionArn}-old`, InvocationType: 'Event' } },
      ];
    return rule;
  };

  it('on Update, rewrites only the rules whose actions changed, however many rules there are', async () => {
    const rules = Array.from({ length: 150 }, (_, i) => numbered(i + 1, [7, 70, 140].includes(i + 1)));
    account = new Account({ 'svc-receiving': structuredClone(rules) }, 'svc-receiving');
    await handler(event('Update', 'receiving|svc-receiving|created'));
    expect(ses.commandCalls(UpdateReceiptRuleCommand).map((call) => call.args[0].input.Rule?.Name)).toEqual([
      'svc-receive-7',
      'svc-receive-70',
      'svc-receive-140',
    ]);
    expect(account.sets.get('svc-receiving')).toEqual(rules.map((_, i) => numbered(i + 1, false)));
    expect(answers[0]?.body.Status).toBe('SUCCESS');
    expect(syncs).toEqual(['stack updated']);
  });

  it('on Update, answers with time to spare when more rules changed than it can rewrite, and leaves the rest to the writer', async () => {
    account = new Account(
      { 'svc-receiving': Array.from({ length: 200 }, (_, i) => numbered(i + 1, true)) },
      'svc-receiving',
    );
    // The invocation's clock: each SES call takes its second (the pace), from 2.5 minutes left.
    const timeout = 150_000;
    const context = {
      logStreamName: 'stream',
      getRemainingTimeInMillis: () => timeout - ses.calls().length * 1_000,
    } as Context;
    await handler(event('Update', 'receiving|svc-receiving|created'), context);
    const rewritten = ses.commandCalls(UpdateReceiptRuleCommand).length;
    expect(rewritten).toBeGreaterThan(0);
    expect(rewritten).toBeLessThan(200);
    // Answered while its reserve was left (for one write SES refuses a minute, the sync, the answer).
    expect(context.getRemainingTimeInMillis()).toBeGreaterThanOrEqual(UPDATE_RESERVE_MS - 1_000);
    expect(answers[0]?.body.Status).toBe('SUCCESS');
    expect(syncs).toEqual([`stack updated, ${200 - rewritten} outdated rules left`]);
  });
});
