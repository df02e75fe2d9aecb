/**
 * The ports the use cases talk to. Adapters named after their technology implement them
 * (`adapters/dynamodb`, `adapters/sqs`, `adapters/ses`); tests use in-memory fakes.
 */
import type { ApiKey } from './api-keys.js';
import type { EmailContent, EmailDetail, EmailEvent, EmailSummary } from './email.js';
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
  put(key: ApiKey): Promise<void>;
  deleteByHash(hash: string): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
