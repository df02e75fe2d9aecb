/**
 * The ports the use cases talk to. Adapters named after their technology implement them
 * (`adapters/dynamodb`, `adapters/sqs`, `adapters/ses`); tests use in-memory fakes.
 */
import type { ApiKey } from './api-keys.js';
import type { Domain, DomainIdentity, DomainStatus } from './domains.js';
import type { EmailContent, EmailDetail, EmailEvent, EmailSummary } from './email.js';
import type { IdempotencyBegin, StoredResponse } from './idempotency.js';
import type { ListEmailsQuery } from './list.js';
import type { TerminalStatus } from './status.js';

export interface NewEmail {
  id: string;
  created_at: string;
  content: EmailContent;
}

export type ClaimResult =
  /** This worker may send now; nobody else will until the lease ends. */
  | 'claimed'
  /** Already handed to the provider, or already in a final state: nothing to do. */
  | 'done'
  /** Another worker holds a live lease: try again later. */
  | 'busy'
  /** No such email. */
  | 'missing';

export interface EmailRepository {
  /** Stores a new queued email (status, summary and bodies). */
  create(email: NewEmail): Promise<void>;
  get(id: string): Promise<EmailDetail | null>;
  list(query: ListEmailsQuery): Promise<{ data: EmailSummary[]; has_more: boolean }>;
  /** Takes a time-limited lease on a queued, not yet sent email, so a duplicate queue message cannot send it twice. */
  claim(id: string, nowMs: number, leaseMs: number): Promise<ClaimResult>;
  /** Gives a lease back after a failure that will be retried. */
  release(id: string): Promise<void>;
  /** Records that the provider accepted the email. */
  markSent(id: string, providerMessageId: string, at: string): Promise<void>;
  /** Moves a queued email to a final status; returns false when it was not queued (late or duplicate event). */
  finish(id: string, status: TerminalStatus, at: string, reason?: string): Promise<boolean>;
  /** Appends a delivery event (idempotent for a repeated event). */
  addEvent(id: string, event: EmailEvent): Promise<void>;
}

/** What goes on the send queue: everything the consumer needs, so it reads nothing back. */
export interface SendJob {
  id: string;
  content: EmailContent;
}

export interface EmailQueue {
  enqueue(job: SendJob): Promise<void>;
}

export class MailerError extends Error {
  constructor(
    message: string,
    /** true: the provider may accept it later (throttling, outage); false: it never will. */
    readonly retryable: boolean,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MailerError';
  }
}

export interface Mailer {
  /** Hands the email to the provider; resolves with the provider's message id, or throws MailerError. */
  send(job: SendJob): Promise<{ messageId: string }>;
}

export interface ApiKeyRepository {
  findByHash(hash: string): Promise<ApiKey | null>;
  /** Stores a new key (the lookup item by hash and the listing item). */
  put(key: ApiKey): Promise<void>;
  /** Revokes a key: gone from the lookup at once, so its next request is refused. */
  deleteByHash(hash: string): Promise<void>;
  getById(id: string): Promise<ApiKey | null>;
  /** Newest first, with `last_used_at`. */
  list(query: { limit: number; offset: number }): Promise<{ data: ApiKey[]; has_more: boolean }>;
  /** Records use, for `last_used_at`; never brings back a revoked key. */
  touch(hash: string, at: string): Promise<void>;
}

/** Counts a subject's requests per window, shared by every function instance. */
export interface RateCounter {
  /** Adds one request to the subject's counter for this window and returns the new count. */
  hit(subject: string, window: number, expiresAtSeconds: number): Promise<number>;
}

export interface IdempotencyStore {
  begin(
    scope: string,
    keyHash: string,
    fingerprint: string,
    emailId: string,
    nowMs: number,
  ): Promise<IdempotencyBegin>;
  complete(scope: string, keyHash: string, response: StoredResponse): Promise<void>;
  /** Gives the key back after a failure, so a retry starts afresh. */
  abandon(scope: string, keyHash: string, emailId: string): Promise<void>;
}

/** How a claim on a domain name went: taken for this id, or already held by another. */
export type NameClaim =
  | { claimed: true }
  | { claimed: false; id: string; state: 'creating' | 'active'; claimedAtMs: number };

export interface DomainRepository {
  /**
   * Reserves a domain name for a new domain id, so one name has one domain. A claim left in
   * `creating` by a request that died is taken over once it is `leaseMs` old.
   */
  claimName(domain: string, id: string, nowMs: number, leaseMs: number): Promise<NameClaim>;
  /** Gives back a claim that never became a domain (the provider refused). */
  releaseName(domain: string, id: string): Promise<void>;
  /** Stores a domain and makes its name active; `existing` refuses to bring back a deleted one. */
  save(domain: Domain, mode: 'new' | 'existing'): Promise<boolean>;
  get(id: string): Promise<Domain | null>;
  /** Newest first. */
  list(query: { limit: number; offset: number }): Promise<{ data: Domain[]; has_more: boolean }>;
  /** Every domain, oldest first (for the scheduled re-check). */
  all(): AsyncIterable<Domain>;
  /** What a send needs to know about its sender's domain, by name; null when there is none. */
  senderState(domain: string): Promise<{ status: DomainStatus; sendable: boolean } | null>;
  delete(domain: Domain): Promise<void>;
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
  /** Creates the identity with DKIM and a MAIL FROM subdomain; idempotent for an identity this service created. */
  create(domain: string): Promise<DomainIdentity>;
  /** Its current state; null when the provider has no such identity. */
  get(domain: string): Promise<DomainIdentity | null>;
  /** Removes it; no error when it is already gone. */
  delete(domain: string): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
