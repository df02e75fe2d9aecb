import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.js';
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

  it('refuses a requestLogs setting that is not true or false', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], requestLogs: 'no' } });
    expect(() => buildApp(app, { account: '123456789012', region: 'us-east-1' })).toThrow(
      /requestLogs must be true or false/,
    );
  });
});
