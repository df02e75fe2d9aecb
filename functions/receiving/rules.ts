import type { Clock } from '../shared/ports.js';
import type { ReceiptRules } from './ports.js';

/**
 * How the receiving domains become SES receipt rules: pure planning (which rules hold which
 * domains, what to put and remove) and the pace of SES's receipt-rule calls. Nothing here knows
 * SES: the writer (sync-rules.ts) applies a plan through the ReceiptRules port.
 *
 * Limits, from SES's "Service quotas in Amazon SES" page (https://docs.aws.amazon.com/ses/latest/dg/quotas.html,
 * "Email receiving quotas"): 500 recipients a receipt rule (older guides said 100) and 200 rules a
 * rule set. Every receipt-rule call's API reference says "You can execute this operation no more
 * than once per second" (e.g. CreateReceiptRule, UpdateReceiptRule, DeleteReceiptRule).
 */
export const MAX_RECIPIENTS_PER_RULE = 500;
export const MAX_RULES_PER_SET = 200;
/** At most one receipt-rule call a second. */
export const RULE_CALL_INTERVAL_MS = 1_000;

/**
 * What a rule of ours holds while no domain receives. SES's ReceiptRule.Recipients: "If this field
 * is not specified, this rule matches all recipients on all verified domains", so a rule is never
 * left without a recipient: it holds this one instead, a name under `.invalid`, which never
 * receives mail (RFC 2606). The custom resource creates our first rule with it, so the rule matches
 * nothing until the writer fills it with the receiving domains.
 */
export const PLACEHOLDER_RECIPIENT = 'receiving-disabled.invalid';

/** Our rules are `<prefix>-receive-1`, `-2`, …: the number orders them in the set. */
export const ruleName = (prefix: string, number: number): string => `${prefix}-receive-${number}`;

/** The number of one of our rules, by its name; undefined for any other rule. */
export function ruleNumber(prefix: string, name: string): number | undefined {
  const head = `${prefix}-receive-`;
  if (!name.startsWith(head)) return undefined;
  const rest = name.slice(head.length);
  return /^[1-9]\d*$/.test(rest) ? Number(rest) : undefined;
}

export interface RulePut {
  rule: string;
  recipients: string[];
  /** Our rule it follows in the set; undefined: the set's beginning. Only a new rule is placed. */
  after: string | undefined;
}

export interface RulePlan {
  /** In rule order, so a new rule's `after` exists when it is created. */
  puts: RulePut[];
  /** Our rules no longer needed, after the puts. */
  removes: string[];
  /** Domains no rule can take (more than MAX_RULES_PER_SET rules' worth). */
  unplaced: string[];
}

const sameRecipients = (a: readonly string[], b: readonly string[]) => {
  if (a.length !== b.length) return false;
  const set = new Set(a.map((r) => r.toLowerCase()));
  return b.every((r) => set.has(r.toLowerCase()));
};

/**
 * The calls that bring our rules (`current`: name → recipients) to hold exactly `domains`. A domain
 * stays in the rule that holds it (so adding or removing one domain changes one rule: one call);
 * a new one goes to the first rule with room, then to new rules at the lowest free numbers. Our
 * first rule always stays (it is the custom resource's), holding PLACEHOLDER_RECIPIENT when it would
 * hold nothing; any other rule left empty is removed. A domain found in two rules stays in the lower.
 * A kept rule in `outdated` (its actions are not the ones the writer writes: a deploy changed them)
 * is put again even when its recipients stay.
 */
export function planRules(
  prefix: string,
  domains: readonly string[],
  current: ReadonlyMap<string, readonly string[]>,
  outdated: ReadonlySet<string> = new Set(),
): RulePlan {
  const wanted = new Set(domains.map((d) => d.toLowerCase()));
  const ours = [...current.entries()]
    .map(([name, recipients]) => ({ number: ruleNumber(prefix, name), name, recipients }))
    .filter(
      (rule): rule is { number: number; name: string; recipients: readonly string[] } =>
        rule.number !== undefined,
    )
    .sort((a, b) => a.number - b.number);

  const placed = new Set<string>();
  const target = new Map<number, string[]>();
  for (const rule of ours) {
    const keep: string[] = [];
    for (const recipient of rule.recipients.map((r) => r.toLowerCase()))
      if (wanted.has(recipient) && !placed.has(recipient) && keep.length < MAX_RECIPIENTS_PER_RULE) {
        keep.push(recipient);
        placed.add(recipient);
      }
    target.set(rule.number, keep);
  }
  const fresh = [...wanted].filter((d) => !placed.has(d)).sort();
  for (const number of [...target.keys()].sort((a, b) => a - b)) {
    const held = target.get(number) ?? [];
    while (fresh.length && held.length < MAX_RECIPIENTS_PER_RULE) held.push(fresh.shift() as string);
  }
  const unplaced: string[] = [];
  let next = 1;
  while (fresh.length) {
    while (target.has(next)) next++;
    if (target.size >= MAX_RULES_PER_SET) {
      unplaced.push(...fresh.splice(0));
      break;
    }
    target.set(next, fresh.splice(0, MAX_RECIPIENTS_PER_RULE));
  }
  if (!target.has(1)) target.set(1, []);

  const keptNumbers = [...target.entries()]
    .filter(([number, held]) => number === 1 || held.length > 0)
    .map(([number]) => number)
    .sort((a, b) => a - b);
  const puts: RulePut[] = [];
  let previous: string | undefined;
  for (const number of keptNumbers) {
    const name = ruleName(prefix, number);
    const held = (target.get(number) ?? []).sort();
    const recipients = held.length ? held : [PLACEHOLDER_RECIPIENT];
    const now = current.get(name);
    if (!now || !sameRecipients(now, recipients) || outdated.has(name))
      puts.push({ rule: name, recipients, after: previous });
    previous = name;
  }
  const kept = new Set(keptNumbers.map((number) => ruleName(prefix, number)));
  const removes = ours.filter((rule) => !kept.has(rule.name)).map((rule) => rule.name);
  return { puts, removes, unplaced };
}

/**
 * Keeps SES's receipt-rule calls at most one a second from one writer: each call waits its turn
 * (`turn()`, which the SES adapter runs before every call it makes), a full interval after the one
 * before it began. Time is read from the clock; the wait is `sleep`.
 */
export class RuleCallPacer {
  private last: number | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly sleep: (ms: number) => Promise<void>,
    private readonly intervalMs = RULE_CALL_INTERVAL_MS,
  ) {}

  async turn(): Promise<void> {
    const now = this.clock.now().getTime();
    if (this.last !== undefined && now < this.last + this.intervalMs) {
      await this.sleep(this.last + this.intervalMs - now);
      this.last += this.intervalMs;
    } else this.last = now;
  }
}

/** Applies a plan through the port (paced there), one call at a time and in order. */
export async function applyPlan(rules: ReceiptRules, plan: RulePlan): Promise<void> {
  for (const put of plan.puts) await rules.put(put.rule, put.recipients, put.after);
  for (const rule of plan.removes) await rules.remove(rule);
}

/** Our own rule set's name, where the stack creates one (no set was active). */
export const ownRuleSetName = (prefix: string): string => `${prefix}-receiving`;
