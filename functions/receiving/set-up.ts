import type { ReceiptRuleSync } from '../domains/ports.js';
import type { Log } from '../shared/ports.js';
import type { ReceiptRuleSets, ReceiptRules } from './ports.js';
import { PLACEHOLDER_RECIPIENT, ruleName } from './rules.js';

/**
 * Receiving's one-time setup, the CloudFormation custom resource's work (set-up-receiving): it
 * puts our first receipt rule in the account's active rule set without ever replacing a set that is
 * not ours, since SES keeps one active set per account and Region and the account may already
 * receive mail. The rules' recipients are the writer's (sync-rules.ts), never a deploy's.
 *
 * - No set active: it creates ours (`ownSet`) and activates it.
 * - Ours active (a stack set up before, or re-created): it adds our rule to it.
 * - Another set active: it adds our rule to THAT set (first in it) and leaves it active.
 *
 * The first rule holds PLACEHOLDER_RECIPIENT (rules.ts: a rule with no recipient would take every
 * verified domain's mail) until the writer, asked at once, fills it with the receiving domains.
 * A Create that fails undoes what it did before answering FAILED (its rule, the activation, our
 * set), since the rollback's Delete of a failed Create acts on nothing.
 * What was done is kept in the resource's physical id (`receiving|<set>|created` or
 * `…|joined`), so Delete removes only that: our rules, and our set only where we created it and
 * nobody else's rules are in it.
 */
export interface SetUpDeps {
  sets: ReceiptRuleSets;
  /** Our rules in this set. */
  rulesIn(set: string): ReceiptRules;
  /** Asks the writer to bring the rules to the domains. */
  sync: ReceiptRuleSync;
  log: Log;
}

export interface ReceivingSetUp {
  /** The set our rules are in (the writer's RECEIPT_RULE_SET). */
  ruleSet: string;
  /** Whether the stack created that set (then Delete may delete it). */
  created: boolean;
}

export interface SetUpProps {
  /** Our rules' names' prefix. */
  prefix: string;
  /** The name of our own set, when none is active (`<prefix>-receiving`). */
  ownSet: string;
}

const MARK = 'receiving';

export const physicalIdOf = (setUp: ReceivingSetUp): string =>
  `${MARK}|${setUp.ruleSet}|${setUp.created ? 'created' : 'joined'}`;

/** What a physical id says was set up; undefined for any other (a Create that failed before). */
export function setUpOf(physicalId: string | undefined): ReceivingSetUp | undefined {
  const [mark, ruleSet, how, ...rest] = (physicalId ?? '').split('|');
  if (mark !== MARK || !ruleSet || rest.length || (how !== 'created' && how !== 'joined')) return undefined;
  return { ruleSet, created: how === 'created' };
}

export async function createReceiving(deps: SetUpDeps, props: SetUpProps): Promise<ReceivingSetUp> {
  const active = await deps.sets.active();
  // What this Create changed, so that a Create failing half-way gives the account back as it was:
  // its answer's physical id (`…-not-set-up`) makes CloudFormation's rollback Delete a no-op, and
  // our set left active and empty would refuse all the account's inbound mail.
  const done = { createdSet: false, activated: false, rule: undefined as string | undefined };
  try {
    let setUp: ReceivingSetUp;
    if (!active) {
      done.createdSet = await deps.sets.create(props.ownSet);
      await deps.sets.activate(props.ownSet);
      done.activated = true;
      setUp = { ruleSet: props.ownSet, created: true };
    } else setUp = { ruleSet: active.name, created: active.name === props.ownSet };
    const rules = deps.rulesIn(setUp.ruleSet);
    const first = ruleName(props.prefix, 1);
    // Already there (a Create retried): its recipients are the writer's, left as they are.
    if (!(await rules.current()).has(first)) {
      done.rule = first;
      await rules.put(first, [PLACEHOLDER_RECIPIENT], undefined);
    }
    deps.log.info('receiving set up', { ...setUp, active: active?.name ?? null });
    await deps.sync.request('receiving set up');
    return setUp;
  } catch (error) {
    await undoCreate(deps, props, active?.name ?? props.ownSet, done).catch((undoError: unknown) =>
      deps.log.error('receiving: a failed set-up could not be undone', { ...done, error: undoError }),
    );
    throw error;
  }
}

/** Undoes a failed Create's changes, in reverse: its rule, the activation of our set, our set. */
async function undoCreate(
  deps: SetUpDeps,
  props: SetUpProps,
  ruleSet: string,
  done: { createdSet: boolean; activated: boolean; rule: string | undefined },
): Promise<void> {
  if (done.rule) await deps.rulesIn(ruleSet).remove(done.rule);
  if (done.activated && (await deps.sets.active())?.name === props.ownSet) await deps.sets.activate(null);
  if (done.createdSet && (await deps.sets.rulesOf(props.ownSet))?.length === 0)
    await deps.sets.delete(props.ownSet);
  deps.log.warn('receiving: a failed set-up was undone', { ruleSet, ...done });
}

/**
 * What an Update keeps back from its rewrites for the rest of its work: one rule write SES keeps
 * refusing for a while (the adapter tries again for about a minute), the sync request and the
 * answer to CloudFormation, so it answers well within its function's timeout.
 */
export const UPDATE_RESERVE_MS = 90_000;

/**
 * A deploy: recipients are left as the writer keeps them (a deploy never resets them); only our
 * rules whose actions no longer follow the stack (a replaced function's ARN, the bucket) are
 * written again, with the same recipients, one SES call a second, while `timeLeftMs()` (the
 * invocation's time left) stays above UPDATE_RESERVE_MS. Then one sync is asked for: the writer
 * rewrites any outdated rule left (sync-rules.ts), so however many rules there are, the answer is
 * never late (an answer that never comes leaves CloudFormation waiting an hour).
 */
export async function updateReceiving(
  deps: SetUpDeps,
  setUp: ReceivingSetUp,
  timeLeftMs: () => number = () => Number.POSITIVE_INFINITY,
): Promise<{ rewritten: number; left: number }> {
  const rules = deps.rulesIn(setUp.ruleSet);
  const current = await rules.current();
  const outdated = [...rules.outdated()];
  let rewritten = 0;
  for (const rule of outdated) {
    if (timeLeftMs() < UPDATE_RESERVE_MS) break;
    await rules.put(rule, current.get(rule) ?? [], undefined);
    rewritten++;
  }
  const left = outdated.length - rewritten;
  if (left) deps.log.warn('receiving: outdated rules left to the writer', { rewritten, left });
  await deps.sync.request(left ? `stack updated, ${left} outdated rules left` : 'stack updated');
  return { rewritten, left };
}

/** Removes what Create added, and nothing else. */
export async function deleteReceiving(deps: SetUpDeps, setUp: ReceivingSetUp | undefined): Promise<void> {
  if (!setUp) return;
  const rules = deps.rulesIn(setUp.ruleSet);
  for (const rule of (await rules.current()).keys()) await rules.remove(rule);
  if (!setUp.created) return;
  const left = await deps.sets.rulesOf(setUp.ruleSet);
  if (left === null) return;
  if (left.length) {
    // Someone put rules of their own in our set: it is theirs now too, and stays (active or not).
    deps.log.warn('receiving: our rule set holds rules of others, so it is kept', {
      ruleSet: setUp.ruleSet,
      rules: left,
    });
    return;
  }
  // Before us no set was active: deactivating ours gives the account back what it had.
  if ((await deps.sets.active())?.name === setUp.ruleSet) await deps.sets.activate(null);
  await deps.sets.delete(setUp.ruleSet);
}
