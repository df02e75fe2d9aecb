import {
  CreateReceiptRuleCommand,
  CreateReceiptRuleSetCommand,
  DeleteReceiptRuleCommand,
  DeleteReceiptRuleSetCommand,
  DescribeActiveReceiptRuleSetCommand,
  DescribeReceiptRuleSetCommand,
  type ReceiptRule,
  type SESClient,
  SetActiveReceiptRuleSetCommand,
  UpdateReceiptRuleCommand,
} from '@aws-sdk/client-ses';
import { RAW_PREFIX } from '../../receiving/model.js';
import type { ReceiptRuleSets, ReceiptRules } from '../../receiving/ports.js';
import { ruleNumber } from '../../receiving/rules.js';

/**
 * SES's receipt rules (v1 API, awsQuery) for receiving. Each of our rules (`<prefix>-receive-N`):
 * enabled, spam and virus scanning on, TLS optional (SES's default: senders that cannot start TLS
 * still deliver), and two actions in order: SES's S3 action writes the raw message to the content
 * bucket under `received/raw/` (keyed by SES's message id), then its Lambda action invokes
 * receive-email asynchronously (InvocationType Event: SES does not wait, and Lambda retries).
 *
 * Errors, as SES's API reference gives them: RuleSetDoesNotExist (Describe/Update/Delete a rule of a
 * set that is gone), RuleDoesNotExist (UpdateReceiptRule of a missing rule), AlreadyExists
 * (CreateReceiptRule/CreateReceiptRuleSet of a name taken), LimitExceeded (200 rules a set, 40 sets
 * an account), CannotDelete (DeleteReceiptRuleSet of the active set), InvalidLambdaFunction and
 * InvalidS3Configuration (SES could not use the function or bucket: permissions). `Throttling`
 * (SES's one call a second) is retried by the SDK. `pace` runs before every call, so one writer
 * keeps to SES's rate (receiving/rules.ts RuleCallPacer).
 */
export interface SesReceiptRulesOptions {
  /** The set our rules are in. */
  ruleSet: string;
  /** Our rules' names' prefix (`<prefix>-receive-N`). */
  prefix: string;
  /** The content bucket SES's S3 action writes raw messages to. */
  bucket: string;
  /** receive-email's ARN, SES's Lambda action. */
  functionArn: string;
  /** Waits for the next call's turn. @default no wait */
  pace?: () => Promise<void>;
  /**
   * Whether (and how) a create or update SES refused with InvalidS3Configuration or
   * InvalidLambdaFunction is tried again: SES test-writes to the bucket and checks its permission
   * to invoke the function when a rule is written, and a bucket policy or Lambda permission just
   * deployed may not be in effect yet (CDK met "Could not write to bucket" there: aws-cdk issue
   * #30143). `sleep` waits between attempts, `delaysMs` are the waits. @default no retry
   */
  settle?: { sleep: (ms: number) => Promise<void>; delaysMs?: readonly number[] };
}

/** The waits between attempts of a refused rule write: about a minute in all (SETTLE_DELAYS_MS). */
export const SETTLE_DELAYS_MS: readonly number[] = [2_000, 4_000, 8_000, 15_000, 30_000];

const named = (error: unknown, ...names: string[]) =>
  error instanceof Error && names.some((name) => error.name === name || error.name === `${name}Exception`);

/** The rule as the service writes it. */
export const receiptRuleOf = (
  name: string,
  recipients: string[],
  options: Pick<SesReceiptRulesOptions, 'bucket' | 'functionArn'>,
): ReceiptRule => ({
  Name: name,
  Enabled: true,
  ScanEnabled: true,
  TlsPolicy: 'Optional',
  Recipients: recipients,
  Actions: [
    { S3Action: { BucketName: options.bucket, ObjectKeyPrefix: RAW_PREFIX } },
    { LambdaAction: { FunctionArn: options.functionArn, InvocationType: 'Event' } },
  ],
});

/**
 * Whether `found` holds every value `wanted` sets: the same keys' values, lists of the same length
 * item by item; a field SES adds in its answer (one the service never writes) is no difference, so
 * a rule is not rewritten at every sync for it.
 */
const covers = (found: unknown, wanted: unknown): boolean => {
  if (Array.isArray(wanted))
    return (
      Array.isArray(found) &&
      found.length === wanted.length &&
      wanted.every((item, i) => covers(found[i], item))
    );
  if (wanted !== null && typeof wanted === 'object')
    return (
      found !== null &&
      typeof found === 'object' &&
      Object.entries(wanted).every(
        ([key, value]) => value === undefined || covers((found as Record<string, unknown>)[key], value),
      )
    );
  return found === wanted;
};

/** Whether a rule SES describes has the settings the service writes (its recipients aside). */
const sameSettings = (found: ReceiptRule, wanted: ReceiptRule) =>
  (found.Enabled ?? false) === wanted.Enabled &&
  (found.ScanEnabled ?? false) === wanted.ScanEnabled &&
  found.TlsPolicy === wanted.TlsPolicy &&
  covers(found.Actions ?? [], wanted.Actions ?? []);

export class SesReceiptRules implements ReceiptRules {
  /** The rules current() saw: a put of one of them is an update, of any other a create. */
  private seen = new Set<string>();
  /** Those of them whose settings differ from what put writes. */
  private stale = new Set<string>();

  constructor(
    private readonly client: SESClient,
    private readonly options: SesReceiptRulesOptions,
  ) {}

  private async send<T>(call: () => Promise<T>): Promise<T> {
    await this.options.pace?.();
    return call();
  }

  async current(): Promise<Map<string, string[]>> {
    const rules = new Map<string, string[]>();
    const stale = new Set<string>();
    try {
      const { Rules = [] } = await this.send(() =>
        this.client.send(new DescribeReceiptRuleSetCommand({ RuleSetName: this.options.ruleSet })),
      );
      for (const rule of Rules)
        if (rule.Name && ruleNumber(this.options.prefix, rule.Name) !== undefined) {
          rules.set(rule.Name, rule.Recipients ?? []);
          if (!sameSettings(rule, receiptRuleOf(rule.Name, rule.Recipients ?? [], this.options)))
            stale.add(rule.Name);
        }
    } catch (error) {
      // No set, no rules: a put then fails (RuleSetDoesNotExist) and says so.
      if (!named(error, 'RuleSetDoesNotExist')) throw error;
    }
    this.seen = new Set(rules.keys());
    this.stale = stale;
    return rules;
  }

  outdated(): Set<string> {
    return new Set(this.stale);
  }

  /** A rule write, tried again while SES refuses the bucket or the function (options.settle). */
  private async settled<T>(call: () => Promise<T>): Promise<T> {
    const delays = this.options.settle ? (this.options.settle.delaysMs ?? SETTLE_DELAYS_MS) : [];
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.send(call);
      } catch (error) {
        const delay = delays[attempt];
        if (delay === undefined || !named(error, 'InvalidS3Configuration', 'InvalidLambdaFunction'))
          throw error;
        await this.options.settle?.sleep(delay);
      }
    }
  }

  async put(rule: string, recipients: string[], after: string | undefined): Promise<void> {
    const Rule = receiptRuleOf(rule, recipients, this.options);
    const RuleSetName = this.options.ruleSet;
    const update = () =>
      this.settled(() => this.client.send(new UpdateReceiptRuleCommand({ RuleSetName, Rule })));
    const create = () =>
      this.settled(() =>
        this.client.send(
          new CreateReceiptRuleCommand({
            RuleSetName,
            Rule,
            ...(after !== undefined ? { After: after } : {}),
          }),
        ),
      );
    if (this.seen.has(rule)) {
      try {
        await update();
      } catch (error) {
        // Deleted since it was read (by hand): made again, in its place.
        if (!named(error, 'RuleDoesNotExist')) throw error;
        await create();
      }
    } else {
      try {
        await create();
      } catch (error) {
        // Made since it was read (a custom resource's first rule): brought to these recipients.
        if (!named(error, 'AlreadyExists')) throw error;
        await update();
      }
    }
    this.seen.add(rule);
    this.stale.delete(rule);
  }

  async remove(rule: string): Promise<void> {
    try {
      await this.send(() =>
        this.client.send(new DeleteReceiptRuleCommand({ RuleSetName: this.options.ruleSet, RuleName: rule })),
      );
    } catch (error) {
      if (!named(error, 'RuleSetDoesNotExist', 'RuleDoesNotExist')) throw error;
    }
    this.seen.delete(rule);
  }

  async activeSetHoldsOurRules(): Promise<{ active: string | null; ours: boolean }> {
    const { Metadata, Rules = [] } = await this.send(() =>
      this.client.send(new DescribeActiveReceiptRuleSetCommand({})),
    );
    const active = Metadata?.Name ?? null;
    const ours =
      active === this.options.ruleSet &&
      Rules.some(
        (rule) => rule.Name !== undefined && ruleNumber(this.options.prefix, rule.Name) !== undefined,
      );
    return { active, ours };
  }
}

/** The account's rule sets, for the custom resource (receiving/set-up.ts). */
export class SesReceiptRuleSets implements ReceiptRuleSets {
  constructor(
    private readonly client: SESClient,
    private readonly pace: () => Promise<void> = async () => undefined,
  ) {}

  private async send<T>(call: () => Promise<T>): Promise<T> {
    await this.pace();
    return call();
  }

  async active(): Promise<{ name: string; rules: string[] } | null> {
    const { Metadata, Rules = [] } = await this.send(() =>
      this.client.send(new DescribeActiveReceiptRuleSetCommand({})),
    );
    if (!Metadata?.Name) return null;
    return { name: Metadata.Name, rules: Rules.flatMap((rule) => (rule.Name ? [rule.Name] : [])) };
  }

  async rulesOf(set: string): Promise<string[] | null> {
    try {
      const { Rules = [] } = await this.send(() =>
        this.client.send(new DescribeReceiptRuleSetCommand({ RuleSetName: set })),
      );
      return Rules.flatMap((rule) => (rule.Name ? [rule.Name] : []));
    } catch (error) {
      if (named(error, 'RuleSetDoesNotExist')) return null;
      throw error;
    }
  }

  async create(set: string): Promise<boolean> {
    try {
      await this.send(() => this.client.send(new CreateReceiptRuleSetCommand({ RuleSetName: set })));
      return true;
    } catch (error) {
      if (!named(error, 'AlreadyExists')) throw error;
      return false;
    }
  }

  async activate(set: string | null): Promise<void> {
    // Without a name, SES deactivates the active set (its API reference: "To disable your
    // email-receiving through Amazon SES completely, you can call this operation with RuleSetName
    // set to null").
    await this.send(() =>
      this.client.send(new SetActiveReceiptRuleSetCommand(set === null ? {} : { RuleSetName: set })),
    );
  }

  async delete(set: string): Promise<void> {
    try {
      await this.send(() => this.client.send(new DeleteReceiptRuleSetCommand({ RuleSetName: set })));
    } catch (error) {
      if (!named(error, 'RuleSetDoesNotExist')) throw error;
    }
  }
}
