import type { Domain } from '../domains/model.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { ReceiptRules, ReceiptRuleViewStore } from './ports.js';
import { applyPlan, planRules } from './rules.js';

/**
 * The one receipt-rule writer (`sync-receipt-rules`, fed by a FIFO queue with one message group, so
 * never two at once): brings our rules to the domains with receiving enabled, then looks at the
 * account's active rule set and keeps what it saw (`RECEIVING` / `RULES`), with the metric
 * `ReceiptRuleSetNotActive` (1 when the active set does not hold our rules, else 0) that an alarm
 * watches. Each run reads everything again, so any number of requests make the same rules.
 */
export interface SyncRulesDeps {
  /** Every domain (one Query of the domains' partition). */
  domains: { all(): AsyncIterable<Domain> };
  /** Our rules (paced: one SES call a second). */
  rules: ReceiptRules;
  views: ReceiptRuleViewStore;
  /** The set our rules are in. */
  ruleSet: string;
  /** Our rules' names' prefix. */
  prefix: string;
  clock: Clock;
  log: Log;
  counters: Counters;
}

export interface SyncResult {
  domains: number;
  puts: number;
  removes: number;
  active_set: string | null;
  ours: boolean;
}

/** The domains with receiving enabled (Resend's `capabilities.receiving`), by name. */
export async function receivingDomains(domains: { all(): AsyncIterable<Domain> }): Promise<string[]> {
  const names: string[] = [];
  for await (const domain of domains.all())
    if ((domain as { receiving?: boolean }).receiving === true) names.push(domain.domain);
  return names;
}

export async function syncRules(deps: SyncRulesDeps): Promise<SyncResult> {
  const domains = await receivingDomains(deps.domains);
  const current = await deps.rules.current();
  // Rules a deploy's custom resource had no time to rewrite (or that a deploy changed since) are
  // rewritten too.
  const plan = planRules(deps.prefix, domains, current, deps.rules.outdated());
  if (plan.unplaced.length)
    deps.log.error('receiving: more domains than SES takes in one rule set', { unplaced: plan.unplaced });
  // What the active set is gets recorded even when SES refused the rules (our set deleted by hand:
  // RuleSetDoesNotExist), so the domains' records say mail cannot arrive; the failure is thrown after.
  const failure = await applyPlan(deps.rules, plan).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const { active, ours } = await deps.rules.activeSetHoldsOurRules();
  await deps.views.save({
    active_set: active,
    ours,
    rule_set: deps.ruleSet,
    checked_at: deps.clock.now().toISOString(),
  });
  deps.counters.count('ReceiptRuleSetNotActive', ours ? 0 : 1);
  if (!ours)
    deps.log.warn("receiving: the active rule set does not hold this service's rules", {
      active_set: active,
      rule_set: deps.ruleSet,
    });
  if (failure) throw failure.error;
  return {
    domains: domains.length,
    puts: plan.puts.length,
    removes: plan.removes.length,
    active_set: active,
    ours,
  };
}
