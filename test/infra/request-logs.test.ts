import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.js';
import { WRITER_RETRY_RECEIVES } from '../../lib/constructs/request-logs.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
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
    off.template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 0);
  });

  it('refuses a requestLogs setting that is not true or false', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], requestLogs: 'no' } });
    expect(() => buildApp(app, { account: '123456789012', region: 'us-east-1' })).toThrow(
      /requestLogs must be true or false/,
    );
  });
});
