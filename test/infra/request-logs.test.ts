import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FunctionName } from '../../functions/catalog.js';
import { buildApp } from '../../lib/app.js';
import { writesRequestLogLines } from '../../lib/constructs/concept-stacks.js';
import { WRITER_RETRY_RECEIVES } from '../../lib/constructs/request-logs.js';
import { EmailServiceStack } from '../../lib/email-service-stack.js';
import { CLOUDWATCH_RETENTION_DAYS, cloudWatchRetentionWithin } from '../../lib/request-log-retention.js';
import { logicalId, type Resource, resourcesOf, synthStack, templateOf } from '../support/template.js';

/**
 * The request logs' wiring: the API functions log as text, so the line each writes to stdout
 * arrives as the log event's message and the JSON filter pattern matches it (test/unit/
 * request-logs.test.ts shows a prefixed or JSON-wrapped line would not); and the requestLogs
 * setting turns the whole of it off.
 */
let on: { stack: EmailServiceStack; template: Template };
let off: { stack: EmailServiceStack; template: Template };

beforeAll(() => {
  on = synthStack();
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], requestLogs: 'false' } });
  const { service } = buildApp(app, { account: '123456789012', region: 'us-east-1' });
  off = { stack: service, template: templateOf(service) };
});

const apiFunctionsOf = ({ stack, template }: typeof on) => {
  const functions = resourcesOf(template, 'AWS::Lambda::Function');
  // The API routes' functions (the public pages read no key and log nothing).
  return [...stack.api.functions.values()]
    .filter((fn) => fn.spec.optionalEnv?.includes('REQUEST_LOGS'))
    .map((fn) => functions[logicalId(stack, fn.function)] as Resource);
};
const variablesOf = (fn: Resource) =>
  (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

describe('request logs in the stack', () => {
  it('the API functions log as text (no JSON log format), so their raw stdout line is the event the filter sees', () => {
    const functions = apiFunctionsOf(on);
    expect(functions.length).toBeGreaterThan(20);
    for (const fn of functions) {
      const format = (fn.Properties.LoggingConfig as { LogFormat?: string } | undefined)?.LogFormat;
      expect(format === undefined || format === 'Text').toBe(true);
      // On by default: the functions are not told otherwise.
      expect(variablesOf(fn)).not.toHaveProperty('REQUEST_LOGS');
    }
    expect(resourcesOf(on.template, 'AWS::Logs::SubscriptionFilter')).not.toEqual({});
  });

  it('-c requestLogs=false: no subscription filter, no writer, no invoke permission, and every API function told to emit nothing', () => {
    const { stack, template } = off;
    expect(stack.requestLogs).toBeUndefined();
    template.resourceCountIs('AWS::Logs::SubscriptionFilter', 0);
    expect(stack.functions).not.toHaveProperty('write-request-logs');
    const fromLogs = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal === 'logs.amazonaws.com',
    );
    expect(fromLogs).toEqual([]);
    for (const fn of apiFunctionsOf(off)) expect(variablesOf(fn)).toHaveProperty('REQUEST_LOGS', 'false');
    // The other functions do not read it.
    const background = resourcesOf(template, 'AWS::Lambda::Function');
    const api = new Set(
      [...stack.api.functions.values()]
        .filter((fn) => fn.spec.optionalEnv?.includes('REQUEST_LOGS'))
        .map((fn) => logicalId(stack, fn.function)),
    );
    for (const [id, fn] of Object.entries(background))
      if (!api.has(id))
        expect(fn.Properties.Environment ? variablesOf(fn) : {}).not.toHaveProperty('REQUEST_LOGS');
    // One fewer function than with logs on.
    expect(Object.keys(background)).toHaveLength(
      Object.keys(resourcesOf(on.template, 'AWS::Lambda::Function')).length - 1,
    );
  });

  it("sends the writer's failed batches to a retry queue it consumes, and what keeps failing to a dead-letter queue kept 14 days, with an alarm", () => {
    const { stack, template } = on;
    const logs = stack.requestLogs;
    if (!logs) throw new Error('request logs are on by default');
    const writerId = logicalId(stack, logs.writer.function);
    const retryQueue = logicalId(stack, logs.retryQueue);
    const deadLetters = logicalId(stack, logs.deadLetterQueue);
    // CloudWatch Logs invokes the writer asynchronously: after Lambda's two retries, the failed
    // invocation (its batch inside) goes to the retry queue.
    const configs = Object.values(resourcesOf(template, 'AWS::Lambda::EventInvokeConfig')).filter((c) =>
      JSON.stringify(c.Properties.FunctionName).includes(writerId),
    );
    expect(configs).toHaveLength(1);
    const config = configs[0]?.Properties as {
      MaximumRetryAttempts: number;
      DestinationConfig: { OnFailure: { Destination: unknown } };
    };
    expect(config.MaximumRetryAttempts).toBe(2);
    expect(JSON.stringify(config.DestinationConfig.OnFailure.Destination)).toContain(retryQueue);
    // The writer takes them back from the queue, one at a time, leaving a failed one for its next try.
    const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping')).filter((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(retryQueue),
    );
    expect(mappings).toHaveLength(1);
    expect(JSON.stringify(mappings[0]?.Properties.FunctionName)).toContain(writerId);
    expect(mappings[0]?.Properties).toMatchObject({
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // Nothing is dropped: the retry queue keeps a message 14 days and hands one that failed
    // WRITER_RETRY_RECEIVES times to its dead-letter queue, kept 14 days and watched by an alarm.
    const queues = resourcesOf(template, 'AWS::SQS::Queue');
    expect(queues[retryQueue]?.Properties).toMatchObject({
      MessageRetentionPeriod: 14 * 86_400,
      VisibilityTimeout: 180,
      RedrivePolicy: { maxReceiveCount: WRITER_RETRY_RECEIVES },
    });
    expect(JSON.stringify(queues[retryQueue]?.Properties.RedrivePolicy)).toContain(deadLetters);
    expect(queues[deadLetters]?.Properties).toMatchObject({ MessageRetentionPeriod: 14 * 86_400 });
    const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).filter((a) =>
      JSON.stringify(a.Properties.Metrics ?? a.Properties).includes(deadLetters),
    );
    expect(alarms).toHaveLength(1);
    // With logs off, none of it.
    // (receive-email's failure destination, receiving's, is the only one left).
    const offConfigs = Object.values(resourcesOf(off.template, 'AWS::Lambda::EventInvokeConfig'));
    expect(offConfigs.map((c) => JSON.stringify(c.Properties.FunctionName))).toEqual([
      expect.stringContaining('receiveemailFunction'),
    ]);
  });

  it('refuses a requestLogs setting that is not true or false', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], requestLogs: 'no' } });
    expect(() => buildApp(app, { account: '123456789012', region: 'us-east-1' })).toThrow(
      /requestLogs must be true or false/,
    );
  });
});

describe("request logs kept no longer than the emails, with or without their bodies (docs/logs.md, 'What is kept where')", () => {
  const synth = (context: Record<string, string>, props: { logRetention?: RetentionDays } = {}) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
    if (props.logRetention === undefined)
      return buildApp(app, { account: '123456789012', region: 'us-east-1' }).service;
    return new EmailServiceStack(app, 'Kept', {
      env: { account: '123456789012', region: 'us-east-1' },
      logRetention: props.logRetention,
      logRetentionDays: Number(context.logRetentionDays),
      emailRetentionDays: Number(context.emailRetentionDays),
      requestLogsOutliveEmails: context.requestLogsOutliveEmails === 'true',
    });
  };
  /** Each function's log group's retention in days, by whether it receives request-log lines. */
  const retentionsOf = (stack: EmailServiceStack) => {
    const groups = resourcesOf(Template.fromStack(stack), 'AWS::Logs::LogGroup');
    const of = (lines: boolean) =>
      new Set(
        [...stack.concepts.logGroups]
          .filter(([name]) => writesRequestLogLines(name) === lines)
          .map(([, group]) => groups[logicalId(stack, group)]?.Properties.RetentionInDays),
      );
    return { lines: of(true), others: of(false) };
  };
  /** A function's environment, from its own (nested) stack's template: no need to read them all as one. */
  const envOf = (stack: EmailServiceStack, name: FunctionName) => {
    const fn = stack.functions[name];
    if (!fn) throw new Error(`no ${name}`);
    const own = Stack.of(fn);
    const id = own.resolve((fn.node.defaultChild as CfnElement).logicalId) as string;
    return variablesOf(resourcesOf(Template.fromStack(own), 'AWS::Lambda::Function')[id] as Resource);
  };
  const warningsOf = (stack: EmailServiceStack) =>
    Annotations.fromStack(stack)
      .findWarning('*', Match.anyValue())
      .map((w) => String(w.entry.data));

  it('CloudWatch retention values, rounded down: the longest it accepts within a number of days', () => {
    const wrong: number[] = [];
    for (let days = 1; days <= 4000; days++) {
      const within: number = cloudWatchRetentionWithin(days);
      const allowed = CLOUDWATCH_RETENTION_DAYS as readonly number[];
      if (!allowed.includes(within) || within > days || allowed.some((a) => a > within && a <= days))
        wrong.push(days);
    }
    expect(wrong).toEqual([]);
    expect([30, 10, 45, 2, 364].map(cloudWatchRetentionWithin)).toEqual([30, 7, 30, 1, 180]);
  });

  it('by default: 30 days in the table and in the API functions’ log groups, bodies kept', () => {
    const { stack } = on;
    expect(retentionsOf(stack)).toEqual({ lines: new Set([30]), others: new Set([30]) });
    expect(envOf(stack, 'write-request-logs')).toMatchObject({ LOG_RETENTION_DAYS: '30' });
    expect(envOf(stack, 'write-request-logs')).not.toHaveProperty('REQUEST_LOG_BODIES');
    expect(envOf(stack, 'send-email')).not.toHaveProperty('REQUEST_LOG_BODIES');
    expect(warningsOf(stack).filter((w) => /request ?logs/i.test(w))).toEqual([]);
  });

  it('-c emailRetentionDays=10 -c requestLogBodies=false: the table keeps logs 10 days, the log groups that receive their lines 7, and no function logs or stores a body', () => {
    const stack = synth({ emailRetentionDays: '10', requestLogBodies: 'false' });
    expect(retentionsOf(stack)).toEqual({ lines: new Set([7]), others: new Set([30]) });
    expect(envOf(stack, 'write-request-logs')).toMatchObject({
      LOG_RETENTION_DAYS: '10',
      REQUEST_LOG_BODIES: 'false',
    });
    const api = [...stack.api.functions.values()].filter((fn) => writesRequestLogLines(fn.name));
    expect(api.length).toBeGreaterThan(20);
    for (const fn of api) expect(envOf(stack, fn.name)).toHaveProperty('REQUEST_LOG_BODIES', 'false');
    // A batch waiting for a retry is kept no longer than its logs either.
    const queues = resourcesOf(Template.fromStack(stack), 'AWS::SQS::Queue');
    for (const queue of [stack.requestLogs?.retryQueue, stack.requestLogs?.deadLetterQueue])
      expect(queues[logicalId(stack, queue as Queue)]?.Properties.MessageRetentionPeriod).toBe(10 * 86_400);
    // Only the default was capped: nothing to warn about.
    expect(warningsOf(stack)).toEqual([]);
  });

  it('-c logRetentionDays=90 with emailRetentionDays=45: kept 45 days (30 in the log groups), and a warning naming the opt-in', () => {
    const capped = synth({ logRetentionDays: '90', emailRetentionDays: '45' });
    expect(retentionsOf(capped).lines).toEqual(new Set([30]));
    expect(envOf(capped, 'write-request-logs')).toMatchObject({
      LOG_RETENTION_DAYS: '45',
    });
    expect(warningsOf(capped)).toEqual([
      expect.stringMatching(/logRetentionDays \(90\).*requestLogsOutliveEmails=true/),
    ]);
  });

  it('opted in (requestLogsOutliveEmails=true): kept logRetentionDays, in the log groups too (within their own logRetention)', () => {
    const kept = synth(
      { logRetentionDays: '90', emailRetentionDays: '45', requestLogsOutliveEmails: 'true' },
      { logRetention: RetentionDays.SIX_MONTHS },
    );
    expect(retentionsOf(kept)).toEqual({ lines: new Set([90]), others: new Set([180]) });
    expect(envOf(kept, 'write-request-logs')).toMatchObject({ LOG_RETENTION_DAYS: '90' });
    expect(warningsOf(kept)).toEqual([]);
  });

  it('warns at synth of an opt-in that changes nothing, and refuses one that is not true or false', () => {
    const stack = synth({ requestLogsOutliveEmails: 'true' });
    expect(warningsOf(stack)).toEqual([
      expect.stringMatching(/requestLogsOutliveEmails=true changes nothing/),
    ]);
    expect(retentionsOf(stack).lines).toEqual(new Set([30]));
    for (const setting of ['requestLogsOutliveEmails', 'requestLogBodies'])
      expect(() => synth({ [setting]: 'yes' })).toThrow(new RegExp(`${setting} must be true or false`));
  });
});
