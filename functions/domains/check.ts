import type { DomainDeps } from './deps.js';
import type { Domain } from './model.js';
import { requestRuleSync, ruleSetProblem } from './receiving.js';
import { refreshDomain } from './sync.js';

/** A verified domain is re-read from the provider at most this often by the scheduled check. */
export const VERIFIED_RECHECK_MS = 60 * 60 * 1000;

/** Tracking records still pending in DNS are looked up again by the scheduled check this often. */
export const TRACKING_RECHECK_MS = 5 * 60 * 1000;

/**
 * A domain whose set an older prefix named is moved by the scheduled check at most this often: a
 * move SES refuses (its set cannot be made again as it is) is tried again 5 minutes on, not every
 * run, while sends go on with the old set (its grant stays while legacyDomainSets is on).
 */
export const MOVE_RETRY_MS = 5 * 60 * 1000;

/** Most domains the scheduled check reads from the provider in one run (SES throttles identity reads). */
export const MAX_CHECKS_PER_RUN = 50;

/**
 * While any domain receives, the scheduled check asks the receipt-rule writer to follow once the
 * writer's last look (its `RULES` item's `checked_at`) is this old, or there is none: any run of
 * the writer after a change brings the rules to it, so a request lost after a change is made good
 * within about two of these, without a message every run (every second locally).
 */
export const RULES_RESYNC_MS = 60 * 1000;

/** Most retired sets the scheduled check deletes in one run. */
export const MAX_RETIRED_SETS_PER_RUN = 10;

/** Still waiting for SES to see DNS. */
const waiting = (status: string) => status === 'pending' || status === 'temporary_failure';

/**
 * The scheduled re-check: domains with records still waiting for DNS (pending, temporary_failure)
 * every run, verified ones once an hour (DNS records can be removed later). Failed ones are left
 * alone: SES stops looking after 72 hours. At most MAX_CHECKS_PER_RUN a run, the least recently
 * checked first, so however many are waiting, each is looked at in turn. Receiving domains are
 * looked at as soon as the active rule set's state (read once a run) no longer matches what their
 * `Receiving` record says, and while any domain receives, a run asks the receipt-rule writer to
 * bring the rules to the domains once its last look is RULES_RESYNC_MS old (a request lost after a
 * change is made good).
 */
export async function checkDomains(deps: DomainDeps): Promise<{ checked: number; changed: number }> {
  const now = deps.clock.now().getTime();
  const due: Domain[] = [];
  const run = await withRuleSetReadOnce(deps);
  const rules = run.receiving ? await run.receiving.ruleSets.get().catch(() => null) : null;
  const ruleProblem = ruleSetProblem(rules);
  let receiving = false;
  for await (const domain of deps.domains.all()) {
    receiving ||= domain.receiving;
    const since = now - Date.parse(domain.checked_at);
    const waitingFor = (kinds: readonly string[]) =>
      domain.records.some((r) => kinds.includes(r.record) && waiting(r.status));
    if (
      waiting(domain.status) ||
      // Verified by DKIM while the MAIL FROM records are still being looked for.
      (domain.status === 'verified' && waitingFor(['DKIM', 'SPF'])) ||
      // Tracking records nobody may ever publish: looked for less often (a read of the domain
      // looks at once).
      (waitingFor(['Tracking', 'TrackingCAA', 'Receiving']) && since >= TRACKING_RECHECK_MS) ||
      // The active rule set changed (or came back) since its record said.
      (domain.receiving && (ruleProblem !== undefined) !== receivingFailed(domain)) ||
      (domain.status === 'verified' && since >= VERIFIED_RECHECK_MS) ||
      // A set named by an older prefix: moved to its current name, whatever the status.
      (movable(deps, domain) && since >= MOVE_RETRY_MS)
    )
      due.push(domain);
  }
  due.sort((a, b) => Date.parse(a.checked_at) - Date.parse(b.checked_at));
  let changed = 0;
  const batch = due.slice(0, MAX_CHECKS_PER_RUN);
  for (const domain of batch) {
    try {
      // The hourly look at a verified domain also puts its set again, whatever drifted.
      const hourly = now - Date.parse(domain.checked_at) >= VERIFIED_RECHECK_MS;
      // Changed by another writer meanwhile (null): its next run looks again.
      const refreshed = await refreshDomain(run, domain, true, hourly);
      if (refreshed && refreshed.status !== domain.status) changed++;
    } catch (error) {
      deps.log?.error('domain check failed', { domain_id: domain.id, error });
    }
  }
  await deleteRetiredSets(deps, now);
  if (receiving && !(rules && now - Date.parse(rules.checked_at) < RULES_RESYNC_MS))
    await requestRuleSync(deps, 'scheduled check');
  return { checked: batch.length, changed };
}

const receivingFailed = (domain: Domain) =>
  domain.records.some((r) => r.record === 'Receiving' && r.status === 'failed');

/** The deps with the writer's view of the rule set read once for the whole run (one GetItem). */
async function withRuleSetReadOnce(deps: DomainDeps): Promise<DomainDeps> {
  if (!deps.receiving) return deps;
  const state = deps.receiving.ruleSets.get();
  // Read once; a failure is read as "nothing known" (each domain's look logs it).
  state.catch(() => undefined);
  return { ...deps, receiving: { ...deps.receiving, ruleSets: { get: () => state } } };
}

/** Whether the domain's set is named otherwise than the stack names it now (an older prefix). */
const movable = (deps: DomainDeps, domain: Domain) =>
  deps.sending !== undefined &&
  domain.configuration_set !== undefined &&
  domain.configuration_set.name !== deps.sending.configurationSetName(domain.id);

/** Deletes the configuration sets of deleted domains whose time has come (a few a run). */
async function deleteRetiredSets(deps: DomainDeps, now: number): Promise<void> {
  if (!deps.sending) return;
  const due = (await deps.domains.retiredConfigurationSets(now)).slice(0, MAX_RETIRED_SETS_PER_RUN);
  for (const name of due) {
    try {
      await deps.sending.configurationSets.delete(name);
      await deps.domains.forgetRetiredConfigurationSet(name);
    } catch (error) {
      deps.log?.error('could not delete a retired configuration set', { name, error });
    }
  }
}
