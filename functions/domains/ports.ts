import type { PageQuery } from '../shared/list.js';
import type { NameClaim } from '../shared/ports.js';
import type { Domain, DomainConfigurationSet, DomainIdentity, DomainStatus, SenderOptions } from './model.js';

export type { NameClaim } from '../shared/ports.js';

export interface DomainRepository {
  /**
   * Reserves a domain name for a new domain id, so one name has one domain. A claim left in
   * `creating` by a request that died is taken over once it is `leaseMs` old.
   */
  claimName(domain: string, id: string, nowMs: number, leaseMs: number): Promise<NameClaim>;
  /** Gives back a claim that never became a domain (the provider refused). */
  releaseName(domain: string, id: string): Promise<void>;
  /**
   * Stores a domain (its version bumped) and makes its name active. `existing` stores it only over
   * the version it was read at: false when it was deleted or changed meanwhile (read it again).
   */
  save(domain: Domain, mode: 'new' | 'existing'): Promise<boolean>;
  get(id: string): Promise<Domain | null>;
  /** Newest first. */
  list(query: PageQuery): Promise<{ data: Domain[]; has_more: boolean }>;
  /** Every domain, oldest first (for the scheduled re-check). */
  all(): AsyncIterable<Domain>;
  /** What a send needs to know about its sender's domain, by name; null when there is none. */
  senderState(domain: string): Promise<({ status: DomainStatus; sendable: boolean } & SenderOptions) | null>;
  delete(domain: Domain): Promise<void>;
  /** Writes again what the send path reads of a domain (after a failure between the two writes). */
  syncName(domain: Domain): Promise<void>;
  /** Marks a configuration set for deletion once `deleteAfterMs` has passed. */
  retireConfigurationSet(name: string, deleteAfterMs: number): Promise<void>;
  /** The retired sets whose time has come. */
  retiredConfigurationSets(nowMs: number): Promise<string[]>;
  forgetRetiredConfigurationSet(name: string): Promise<void>;
}

export type IdentityErrorReason =
  /** The provider already has this identity, not created by this service. */
  | 'exists'
  /** The account may not have more identities. */
  | 'limit'
  /** Too many requests to the provider right now. */
  | 'throttled'
  /** The provider refuses the name. */
  | 'invalid'
  /** The provider failed; nothing is known to have changed. */
  | 'unavailable';

export class IdentityError extends Error {
  constructor(
    message: string,
    readonly reason: IdentityErrorReason,
  ) {
    super(message);
    this.name = 'IdentityError';
  }
}

/** The provider's sending identities (SES domain identities on AWS). */
export interface SendingIdentities {
  /**
   * Creates the identity with DKIM and this MAIL FROM subdomain; idempotent for an identity this
   * service created.
   */
  create(domain: string, mailFrom: string): Promise<DomainIdentity>;
  /** Its current state (its MAIL FROM records as for this subdomain); null when there is no such identity. */
  get(domain: string, mailFrom: string): Promise<DomainIdentity | null>;
  /** Removes it; no error when it is already gone. */
  delete(domain: string): Promise<void>;
}

/**
 * The provider's per-domain sending settings (SES configuration sets on AWS), each with the same
 * event destination, suppression and delivery duration as the stack's own set. Failures are
 * IdentityErrors, with the same reasons.
 */
export interface ConfigurationSets {
  /** Creates the set, or brings one this service created before to these options. */
  put(set: DomainConfigurationSet): Promise<void>;
  /** Removes it; no error when it is already gone. */
  delete(name: string): Promise<void>;
}

/** Where the tracking and receiving records are looked up: public DNS (a local stand-in on a laptop). */
export interface DnsLookup {
  /** The MX records of a name: [] when it has none; throws when DNS cannot answer now. */
  mx(name: string): Promise<{ exchange: string; priority: number }[]>;
  /** The CNAME targets of a name: [] when it has none; throws when DNS cannot answer now. */
  cname(name: string): Promise<string[]>;
  /** The `issue` values of a name's CAA records: [] when it has none; throws when DNS cannot answer. */
  caaIssuers(name: string): Promise<string[]>;
}

/**
 * Whether a tracking host is served as SES writes it, `https://<host>/…`: the HTTPS front answers
 * for it with a certificate valid for its name (on AWS, the CloudFront distribution holds the
 * host's certificate). Looked at before a host goes into a configuration set.
 */
export interface TrackingFront {
  /** Why the host is not served over HTTPS now; undefined when it is. Never throws. */
  problem(host: string): Promise<string | undefined>;
}

/**
 * Asks the one receipt-rule writer (receiving/, `sync-receipt-rules`) to bring SES's receipt rules
 * to the domains with receiving enabled (a FIFO queue on AWS, one message group: one writer).
 */
export interface ReceiptRuleSync {
  request(reason: string): Promise<void>;
}

/**
 * What the receipt-rule writer last saw of the account's active receipt rule set (the table's
 * `RECEIVING`/`RULES` item, written by `sync-receipt-rules`).
 */
export interface ReceiptRuleSetState {
  /** The active rule set's name; null when none is active (SES then receives nothing). */
  active_set: string | null;
  /** Whether the active set holds this service's rules. */
  ours: boolean;
  checked_at: string;
  /** The set our rules are in. */
  rule_set: string;
}

/** Reads the writer's view of the active rule set; null when it has written none yet. */
export interface ReceiptRuleSetStates {
  get(): Promise<ReceiptRuleSetState | null>;
}
