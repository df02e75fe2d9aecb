import { validationError } from '../shared/errors.js';
import type { DomainDeps } from './deps.js';
import type { DnsRecord, Domain, RecordStatus } from './model.js';
import type { DnsLookup, ReceiptRuleSetState } from './ports.js';
import { inboundSmtpHost, RECEIVING_REGIONS, receivesIn } from './receiving-regions.js';

/**
 * A domain's receiving, as the domains concept keeps it: whether it may be enabled here, its
 * `Receiving` MX record and that record's status from public DNS, why mail to it does not reach the
 * service, and the request to the receipt-rule writer (receiving/, `sync-receipt-rules`) after every
 * change, which brings SES's receipt rules to the domains with receiving enabled.
 */

/** The `Receiving` record's MX priority (Resend's). */
export const RECEIVING_MX_PRIORITY = 10;

/** Resend's `Receiving` record: the domain's MX to SES's inbound SMTP host in the stack's Region. */
export const receivingRecord = (
  domain: string,
  region: string,
  status: RecordStatus,
): DnsRecord & { record: 'Receiving'; type: 'MX'; priority: number } => ({
  record: 'Receiving',
  type: 'MX',
  name: domain,
  value: inboundSmtpHost(region),
  priority: RECEIVING_MX_PRIORITY,
  ttl: 'Auto',
  status,
});

/**
 * `capabilities.receiving: "enabled"` where the stack cannot receive: a 400 naming the Regions SES
 * receives in (or, in one of them, saying this deployment has no receiving set up).
 */
export function assertReceivingPossible(deps: DomainDeps): void {
  const region = deps.region ?? 'us-east-1';
  const refuse = (message: string) => {
    throw validationError(message, [{ field: 'capabilities.receiving', message }]);
  };
  if (!receivesIn(region))
    refuse(
      `SES receives email only in ${RECEIVING_REGIONS.join(', ')}; this service is in ${region}. Leave receiving "disabled", or deploy a stack in one of those Regions to receive.`,
    );
  if (!deps.receiving?.sync)
    refuse(
      'This deployment is not set up to receive email (it has no receipt-rule queue): leave receiving "disabled".',
    );
}

/** Why the active rule set keeps mail from the service; undefined when it holds our rules (or nothing is known). */
export function ruleSetProblem(state: ReceiptRuleSetState | null): string | undefined {
  if (!state || state.ours) return undefined;
  const again = `make "${state.rule_set}" the active receipt rule set again (SES console, Email receiving)`;
  return state.active_set === null
    ? `No receipt rule set is active in this account and Region, so SES accepts no mail for this domain: ${again}.`
    : `The account's active receipt rule set is "${state.active_set}", which does not hold this service's rules (they are in "${state.rule_set}"), so SES refuses mail for this domain: ${again}, or add them to "${state.active_set}".`;
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * The `Receiving` record's status from the domain's MX records: `verified` when its most preferred
 * MX (the lowest priority value; every one of them, where several share it, as senders pick among
 * them) is the inbound host; `pending` otherwise, with the host mail goes to instead.
 */
async function mxStatus(
  dns: DnsLookup,
  domain: string,
  host: string,
): Promise<{ status: RecordStatus; problem?: string }> {
  const records = await dns.mx(domain);
  if (records.length === 0) return { status: 'pending' };
  const best = Math.min(...records.map((r) => r.priority));
  const others = records.filter((r) => r.priority === best && bare(r.exchange) !== bare(host));
  if (others.length === 0) return { status: 'verified' };
  return {
    status: 'pending',
    problem: `${domain}'s most preferred MX is ${others.map((r) => bare(r.exchange)).join(', ')} (priority ${best}), not ${host}: mail for it goes there. Give ${host} the lowest priority value, or receive on a subdomain of ${domain} instead.`,
  };
}

/** Where a domain's receiving stands: its `Receiving` record (none when receiving is off) and its problem. */
export interface ReceivingState {
  record?: DnsRecord;
  problem?: string;
}

/**
 * Looks the domain's receiving up: its MX in DNS (bounded by `waitMs`; DNS that cannot answer is
 * `temporary_failure`) and the writer's view of the active rule set. A rule set that does not hold
 * our rules makes the record `failed`, whatever DNS says: no mail reaches the service. Never throws.
 */
export async function receivingState(
  deps: DomainDeps,
  domain: Domain,
  waitMs: number,
): Promise<ReceivingState> {
  if (!domain.receiving) return {};
  const region = deps.region ?? 'us-east-1';
  const host = inboundSmtpHost(region);
  const { receiving } = deps;
  if (!receiving)
    return {
      record: receivingRecord(domain.domain, region, 'pending'),
      problem: 'This deployment is not set up to receive email now (it has no receipt-rule queue).',
    };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ status: RecordStatus }>((resolve) => {
    timer = setTimeout(() => resolve({ status: 'temporary_failure' }), waitMs);
  });
  const [mx, rules] = await Promise.all([
    Promise.race([
      mxStatus(receiving.dns, domain.domain, host).catch(() => ({ status: 'temporary_failure' as const })),
      late,
    ]).finally(() => clearTimeout(timer)),
    receiving.ruleSets.get().then(ruleSetProblem, (error: unknown) => {
      deps.log?.warn('could not read the receipt rule set state', { error });
      return undefined;
    }),
  ]);
  const problem = rules ?? ('problem' in mx ? mx.problem : undefined);
  return {
    record: receivingRecord(domain.domain, region, rules ? 'failed' : mx.status),
    ...(problem ? { problem } : {}),
  };
}

/** The domain with its `Receiving` record (last of its records) and problem as looked up. */
export function withReceiving(domain: Domain, state: ReceivingState): Domain {
  const { receiving_problem: _stale, ...rest } = domain;
  return {
    ...rest,
    records: [
      ...domain.records.filter((r) => r.record !== 'Receiving'),
      ...(state.record ? [state.record] : []),
    ],
    ...(state.problem ? { receiving_problem: state.problem } : {}),
  };
}

/**
 * Asks the receipt-rule writer to bring SES's rules to the receiving domains. A failure is logged,
 * never fails the change: the scheduled check asks again each run while any domain receives.
 */
export async function requestRuleSync(deps: DomainDeps, reason: string): Promise<void> {
  const sync = deps.receiving?.sync;
  if (!sync) return;
  try {
    await sync.request(reason);
  } catch (error) {
    deps.log?.error(
      'could not ask for the receipt rules to follow the domains; the scheduled check asks again',
      {
        reason,
        error,
      },
    );
  }
}
