import {
  AlreadyExistsException,
  CannotDeleteException,
  CreateReceiptRuleCommand,
  CreateReceiptRuleSetCommand,
  DeleteReceiptRuleCommand,
  DeleteReceiptRuleSetCommand,
  DescribeActiveReceiptRuleSetCommand,
  DescribeReceiptRuleSetCommand,
  type ReceiptRule,
  RuleDoesNotExistException,
  RuleSetDoesNotExistException,
  type SESClient,
  SetActiveReceiptRuleSetCommand,
  UpdateReceiptRuleCommand,
} from '@aws-sdk/client-ses';
import type { AwsClientStub } from 'aws-sdk-client-mock';

/**
 * SES's receipt rule sets of one account, answered through aws-sdk-client-mock as SES's API
 * reference documents each call: its output's shape and its errors (the SDK's own exceptions).
 */
export class Account {
  sets = new Map<string, ReceiptRule[]>();
  active: string | undefined;
  failCreateRule: Error | undefined;
  constructor(sets: Record<string, ReceiptRule[]> = {}, active?: string) {
    for (const [name, rules] of Object.entries(sets)) this.sets.set(name, rules);
    this.active = active;
  }
  set(name: string | undefined): ReceiptRule[] {
    const rules = name === undefined ? undefined : this.sets.get(name);
    if (!rules)
      throw new RuleSetDoesNotExistException({ message: `Rule set does not exist: ${name}`, $metadata: {} });
    return rules;
  }
}

/** Answers every SESClient's receipt-rule calls from `account` (read at each call). */
export function answerAsSes(ses: AwsClientStub<SESClient>, accountOf: () => Account) {
  ses.reset();
  ses.on(DescribeActiveReceiptRuleSetCommand).callsFake(() => {
    const { active } = accountOf();
    return active
      ? {
          Metadata: { Name: active, CreatedTimestamp: new Date() },
          Rules: structuredClone(accountOf().set(active)),
        }
      : {};
  });
  ses.on(DescribeReceiptRuleSetCommand).callsFake((input) => ({
    Metadata: { Name: input.RuleSetName },
    Rules: structuredClone(accountOf().set(input.RuleSetName)),
  }));
  ses.on(CreateReceiptRuleSetCommand).callsFake((input) => {
    const account = accountOf();
    if (account.sets.has(input.RuleSetName))
      throw new AlreadyExistsException({ message: 'exists', Name: input.RuleSetName, $metadata: {} });
    account.sets.set(input.RuleSetName, []);
    return {};
  });
  ses.on(SetActiveReceiptRuleSetCommand).callsFake((input) => {
    const account = accountOf();
    if (input.RuleSetName !== undefined) account.set(input.RuleSetName);
    account.active = input.RuleSetName;
    return {};
  });
  ses.on(CreateReceiptRuleCommand).callsFake((input) => {
    const account = accountOf();
    if (account.failCreateRule) throw account.failCreateRule;
    const rules = account.set(input.RuleSetName);
    if (rules.some((rule) => rule.Name === input.Rule.Name))
      throw new AlreadyExistsException({ message: 'exists', Name: input.Rule.Name, $metadata: {} });
    const at = input.After ? rules.findIndex((rule) => rule.Name === input.After) + 1 : 0;
    rules.splice(at, 0, input.Rule);
    return {};
  });
  ses.on(UpdateReceiptRuleCommand).callsFake((input) => {
    const account = accountOf();
    const rules = account.set(input.RuleSetName);
    const at = rules.findIndex((rule) => rule.Name === input.Rule.Name);
    if (at < 0)
      throw new RuleDoesNotExistException({ message: 'no rule', Name: input.Rule.Name, $metadata: {} });
    rules[at] = input.Rule;
    return {};
  });
  ses.on(DeleteReceiptRuleCommand).callsFake((input) => {
    const account = accountOf();
    const rules = account.set(input.RuleSetName);
    account.sets.set(
      input.RuleSetName,
      rules.filter((rule) => rule.Name !== input.RuleName),
    );
    return {};
  });
  ses.on(DeleteReceiptRuleSetCommand).callsFake((input) => {
    const account = accountOf();
    if (account.active === input.RuleSetName)
      throw new CannotDeleteException({ message: 'active', Name: input.RuleSetName, $metadata: {} });
    account.sets.delete(input.RuleSetName);
    return {};
  });
}
