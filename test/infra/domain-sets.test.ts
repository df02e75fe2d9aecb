/**
 * Two stacks in one account whose names share their first 33 characters: each grants its functions
 * and its events topic only its own domains' configuration sets (the prefix holds a digest of the
 * whole name), and the sets named by the old prefix are granted only while `legacyDomainSets` says
 * they may exist (docs/operations.md, "Upgrading").
 */
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../lib/app.js';
import {
  domainConfigurationSetPrefix,
  legacyDomainConfigurationSetPrefix,
} from '../../lib/domain-set-prefixes.js';
import type { EmailServiceStack } from '../../lib/email-service-stack.js';
import { policiesOf, templateOf } from '../support/template.js';

const FIRST = 'EmailService-Production-EuropeWest-Primary';
const SECOND = 'EmailService-Production-EuropeWest-Secondary';
const ID = 'dom_01m80n2x4cf0t8d1v2kq7w5mzs';

/** The configuration-set patterns a template grants or lets publish, as plain strings. */
const setPatterns = (value: unknown) =>
  [...JSON.stringify(value).matchAll(/configuration-set\/([^"]+)"/g)].map((m) => m[1] as string);
/** Whether an IAM pattern (`*` any run of characters) covers a name. */
const covers = (pattern: string, name: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`).test(name);

const synth = (stackName: string, legacy?: boolean) => {
  const app = new App({
    context: {
      'aws:cdk:bundling-stacks': [],
      stackName,
      ...(legacy === undefined ? {} : { legacyDomainSets: String(legacy) }),
    },
  });
  const { service } = buildApp(app, { account: '123456789012', region: 'eu-west-1' });
  return { stack: service, template: templateOf(service) };
};

/** Every set pattern a stack grants or its topic accepts: per function, and the topic's. */
function grants(stack: EmailServiceStack, template: Template) {
  const byFunction = Object.fromEntries(
    [
      'process-send-queue',
      'create-domain',
      'update-domain',
      'get-domain',
      'verify-domain',
      'check-domains',
    ].map((name) => [
      name,
      setPatterns(
        policiesOf(stack, template, name).filter((s) => JSON.stringify(s.Action).includes('ses:')),
      ).filter((p) => p.includes('dom_')),
    ]),
  );
  const topic = setPatterns(template.findResources('AWS::SNS::TopicPolicy'));
  return { byFunction, topic, all: [...Object.values(byFunction).flat(), ...topic] };
}

describe("two stacks whose names share 33 characters, and domains' sets of the old prefix", () => {
  let first: ReturnType<typeof grants>;
  let second: ReturnType<typeof grants>;
  beforeAll(() => {
    // The first as upgraded stacks are (legacyDomainSets unset: on); the second turned it off.
    const a = synth(FIRST);
    const b = synth(SECOND, false);
    first = grants(a.stack, a.template);
    second = grants(b.stack, b.template);
  });

  it("grant each stack's functions and topic its own sets only: no pattern of one covers a set of the other", () => {
    const mine = (stack: string) => `${domainConfigurationSetPrefix(stack)}${ID}`;
    expect(second.all.length).toBeGreaterThan(0);
    for (const pattern of second.all) {
      expect(covers(pattern, mine(SECOND)), pattern).toBe(true);
      expect(covers(pattern, mine(FIRST)), pattern).toBe(false);
      expect(covers(pattern, `${legacyDomainConfigurationSetPrefix(FIRST)}${ID}`), pattern).toBe(false);
    }
    for (const pattern of first.all) expect(covers(pattern, mine(SECOND)), pattern).toBe(false);
  });

  it('grant the old prefix beside the new one unless legacyDomainSets=false (on by default, so an upgrade sends on with its old sets): sending, the domain functions and the check, and the topic', () => {
    const legacy = `${legacyDomainConfigurationSetPrefix(FIRST)}dom_*`;
    const current = `${domainConfigurationSetPrefix(FIRST)}dom_*`;
    for (const [name, patterns] of Object.entries(first.byFunction))
      expect(patterns.sort(), name).toEqual([current, legacy].sort());
    expect(first.topic.sort()).toEqual([current, legacy].sort());
    for (const [name, patterns] of Object.entries(second.byFunction))
      expect(patterns, name).toEqual([`${domainConfigurationSetPrefix(SECOND)}dom_*`]);
    expect(second.topic).toEqual([`${domainConfigurationSetPrefix(SECOND)}dom_*`]);
  });
});
