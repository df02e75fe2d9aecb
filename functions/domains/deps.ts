import type { Clock, Counters, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import { domainEvent } from './events.js';
import type { Domain } from './model.js';
import type {
  ConfigurationSets,
  DnsLookup,
  DomainRepository,
  ReceiptRuleSetStates,
  ReceiptRuleSync,
  SendingIdentities,
  TrackingFront,
} from './ports.js';

export interface DomainDeps {
  domains: DomainRepository;
  identities: SendingIdentities;
  clock: Clock;
  log?: Log;
  counters?: Counters;
  /** Where domain.created, domain.updated and domain.deleted go (absent: none are raised). */
  events?: EventPublisher;
  /** The provider's region, as domain events name it. */
  region?: string;
  /**
   * Per-domain sending settings: the provider's configuration sets, the DNS the tracking records
   * are looked up in, where a tracking CNAME points, whether the front serves a host, and how a domain's own set is named. Absent:
   * a domain can only keep the defaults (tracking off, opportunistic TLS, no tracking subdomain).
   */
  sending?: {
    configurationSets: ConfigurationSets;
    dns: DnsLookup;
    /** The tracking CNAME's value: the HTTPS front (absent: no tracking subdomains). */
    trackingTarget?: string;
    /** Whether a tracking host is served over HTTPS yet (looked at before it goes into a set). */
    front: TrackingFront;
    configurationSetName: (domainId: string) => string;
  };
  /**
   * Receiving, where the stack receives (its Region is one of RECEIVING_REGIONS). Absent, or
   * without `sync`: `capabilities.receiving: "enabled"` is refused.
   */
  receiving?: {
    /**
     * Asks the receipt-rule writer to bring SES's rules to the receiving domains (the functions
     * that change a domain's receiving; absent in those that only read).
     */
    sync?: ReceiptRuleSync;
    /** What the writer last saw of the active rule set. */
    ruleSets: ReceiptRuleSetStates;
    /** Where the `Receiving` MX record is looked up. */
    dns: DnsLookup;
  };
}

/** Raises a domain event; a failure to publish is logged and counted, never fails the change. */
export const raise = (
  deps: DomainDeps,
  type: 'domain.created' | 'domain.updated' | 'domain.deleted',
  domain: Domain,
) =>
  publishQuietly(deps, type, () => [
    domainEvent(type, deps.clock.now().toISOString(), domain, deps.region ?? 'us-east-1'),
  ]);
