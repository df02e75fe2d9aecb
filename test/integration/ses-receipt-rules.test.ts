import {
  CreateReceiptRuleCommand,
  CreateReceiptRuleSetCommand,
  DeleteReceiptRuleSetCommand,
  DescribeReceiptRuleSetCommand,
  SESClient,
  SetActiveReceiptRuleSetCommand,
} from '@aws-sdk/client-ses';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SesReceiptRuleSets, SesReceiptRules } from '../../functions/adapters/ses/receipt-rules.js';
import type { Domain } from '../../functions/domains/model.js';
import type { ReceiptRuleView } from '../../functions/receiving/ports.js';
import { PLACEHOLDER_RECIPIENT } from '../../functions/receiving/rules.js';
import { createReceiving, deleteReceiving, type SetUpDeps } from '../../functions/receiving/set-up.js';
import { syncRules } from '../../functions/receiving/sync-rules.js';
import { CALLER_HEADER } from '../../local/caller-identity.js';
import { type SesStandIn, startSesStandIn } from '../../local/ses-stand-in.js';

/**
 * The receipt-rule adapter and the custom resource's work with the real SES v1 client against the
 * local SES stand-in (awsQuery: form-encoded requests, XML answers and errors), and the stand-in's
 * SMTP-time decision, `acceptsRecipient`, following the active set's enabled rules.
 */
let standIn: SesStandIn;
let client: SESClient;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  standIn = await startSesStandIn({
    eventsQueueUrl: 'http://127.0.0.1:9/000000000000/unused',
    emulatorEndpoint: 'http://127.0.0.1:9',
    sqs: new SQSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }),
  });
  client = new SESClient({
    region: 'us-east-1',
    endpoint: standIn.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  await standIn?.stop();
});

const options = {
  prefix: 'svc',
  bucket: 'svc-content',
  functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:receive-email',
};
const setUpDeps = (syncs: string[]): SetUpDeps => ({
  sets: new SesReceiptRuleSets(client),
  rulesIn: (ruleSet) => new SesReceiptRules(client, { ...options, ruleSet }),
  sync: { request: async (reason) => void syncs.push(reason) },
  log: quiet,
});
const domain = (name: string, receiving: boolean) => ({ domain: name, receiving }) as unknown as Domain;
const accepts = (address: string) => standIn.receiptRules.acceptsRecipient(address);

describe('SES receipt rules, locally', () => {
  it('sets receiving up, fills the rule from the domains, and takes mail only for them', async () => {
    const syncs: string[] = [];
    const setUp = await createReceiving(setUpDeps(syncs), { prefix: 'svc', ownSet: 'svc-receiving' });
    expect(setUp).toEqual({ ruleSet: 'svc-receiving', created: true });
    expect(syncs).toHaveLength(1);
    const { Rules } = await client.send(new DescribeReceiptRuleSetCommand({ RuleSetName: 'svc-receiving' }));
    expect(Rules).toEqual([
      {
        Name: 'svc-receive-1',
        Enabled: true,
        ScanEnabled: true,
        TlsPolicy: 'Optional',
        Recipients: [PLACEHOLDER_RECIPIENT],
        Actions: [
          { S3Action: { BucketName: 'svc-content', ObjectKeyPrefix: 'received/raw/' } },
          { LambdaAction: { FunctionArn: options.functionArn, InvocationType: 'Event' } },
        ],
      },
    ]);
    expect(accepts('anyone@acme.test')).toBe(false);

    const views: ReceiptRuleView[] = [];
    const rules = new SesReceiptRules(client, { ...options, ruleSet: 'svc-receiving' });
    const result = await syncRules({
      domains: {
        async *all() {
          yield* [domain('acme.test', true), domain('other.test', false)];
        },
      },
      rules,
      views: { save: async (view) => void views.push(view) },
      ruleSet: 'svc-receiving',
      prefix: 'svc',
      clock: { now: () => new Date() },
      log: quiet,
      counters: { count: () => undefined },
    });
    expect(result).toMatchObject({ domains: 1, puts: 1, active_set: 'svc-receiving', ours: true });
    expect(await rules.current()).toEqual(new Map([['svc-receive-1', ['acme.test']]]));
    // Read back through SES's XML, the rule has the settings it was written with: nothing is
    // outdated, so neither the writer nor a deploy's Update rewrites it again.
    expect(rules.outdated()).toEqual(new Set());
    // A stack whose function was replaced finds it outdated.
    const replaced = new SesReceiptRules(client, {
      ...options,
      ruleSet: 'svc-receiving',
      functionArn: `${options.functionArn}-2`,
    });
    await replaced.current();
    expect(replaced.outdated()).toEqual(new Set(['svc-receive-1']));
    expect(accepts('Bob@ACME.test')).toBe(true);
    expect(accepts('bob@sub.acme.test')).toBe(false);
    expect(accepts('bob@other.test')).toBe(false);

    // Another set activated by hand: SES then takes none of our domains' mail.
    await client.send(new CreateReceiptRuleSetCommand({ RuleSetName: 'their-set' }));
    await client.send(new SetActiveReceiptRuleSetCommand({ RuleSetName: 'their-set' }));
    expect(await rules.activeSetHoldsOurRules()).toEqual({ active: 'their-set', ours: false });
    expect(accepts('bob@acme.test')).toBe(false);
    await client.send(new SetActiveReceiptRuleSetCommand({ RuleSetName: 'svc-receiving' }));

    await deleteReceiving(setUpDeps([]), setUp);
    expect(await new SesReceiptRuleSets(client).active()).toBeNull();
    expect(await new SesReceiptRuleSets(client).rulesOf('svc-receiving')).toBeNull();
    expect(accepts('bob@acme.test')).toBe(false);
  });

  it('answers SES’s errors in its shape, which the SDK turns into its exceptions', async () => {
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => 'answered',
        (error: Error) => error.name,
      );
    expect(await refused(client.send(new DescribeReceiptRuleSetCommand({ RuleSetName: 'none' })))).toBe(
      'RuleSetDoesNotExistException',
    );
    await client.send(new CreateReceiptRuleSetCommand({ RuleSetName: 'errors' }));
    expect(await refused(client.send(new CreateReceiptRuleSetCommand({ RuleSetName: 'errors' })))).toBe(
      'AlreadyExistsException',
    );
    await client.send(new CreateReceiptRuleCommand({ RuleSetName: 'errors', Rule: { Name: 'r1' } }));
    expect(
      await refused(
        client.send(new CreateReceiptRuleCommand({ RuleSetName: 'errors', Rule: { Name: 'r1' } })),
      ),
    ).toBe('AlreadyExistsException');
    await client.send(new SetActiveReceiptRuleSetCommand({ RuleSetName: 'errors' }));
    expect(await refused(client.send(new DeleteReceiptRuleSetCommand({ RuleSetName: 'errors' })))).toBe(
      'CannotDeleteException',
    );
    await client.send(new SetActiveReceiptRuleSetCommand({}));
    await client.send(new DeleteReceiptRuleSetCommand({ RuleSetName: 'errors' }));
  });

  it('refuses a function whose role lacks the action with 403 AccessDenied, as the v2 calls', async () => {
    const asSendEmail = new SESClient({
      region: 'us-east-1',
      endpoint: standIn.endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    asSendEmail.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers[CALLER_HEADER] = 'send-email';
        return next(args);
      },
      { step: 'build' },
    );
    const error = await asSendEmail
      .send(new DescribeReceiptRuleSetCommand({ RuleSetName: 'x' }))
      .catch((e) => e);
    expect(error).toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
  });

  it('matches as SES does: an address, a domain, `.domain` for its subdomains, enabled rules of the active set only', async () => {
    await client.send(new CreateReceiptRuleSetCommand({ RuleSetName: 'matching' }));
    const rule = (Name: string, Recipients: string[], Enabled = true) =>
      client.send(
        new CreateReceiptRuleCommand({ RuleSetName: 'matching', Rule: { Name, Enabled, Recipients } }),
      );
    await rule('address', ['Only@Single.test']);
    await rule('subdomains', ['.parent.test']);
    await rule('disabled', ['off.test'], false);
    expect(accepts('only@single.test')).toBe(false); // not active yet
    await client.send(new SetActiveReceiptRuleSetCommand({ RuleSetName: 'matching' }));
    expect(accepts('only@single.test')).toBe(true);
    expect(accepts('other@single.test')).toBe(false);
    expect(accepts('a@deep.sub.parent.test')).toBe(true);
    expect(accepts('a@parent.test')).toBe(false);
    expect(accepts('a@off.test')).toBe(false);
    await client.send(new SetActiveReceiptRuleSetCommand({}));
  });
});
