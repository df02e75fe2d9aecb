import type { PageQuery } from '../shared/list.js';
import type { ParsedBodies, ReceivedEmail } from './model.js';

/** Received emails in the table (adapters/dynamodb/received-emails.ts). */
export interface ReceivedEmailRepository {
  /**
   * Stores a received email unless one was stored for its SES message id already: then returns
   * that one (`created: false`), so SES handing a message over twice makes one received email.
   */
  store(email: ReceivedEmail): Promise<{ email: ReceivedEmail; created: boolean }>;
  /**
   * Adds envelope recipients to its `received_for` (those it lacks, in order, within the limits of
   * bounds.ts): SES runs each matching receipt rule's actions, so a message to domains of two rules
   * comes in two invocations, each with its own rule's recipients. Returns the email as stored.
   */
  addRecipients(id: string, recipients: string[]): Promise<ReceivedEmail | null>;
  /** Records that `email.received` went out for it. */
  markNotified(id: string): Promise<void>;
  get(id: string): Promise<ReceivedEmail | null>;
  bySesMessageId(sesMessageId: string): Promise<ReceivedEmail | null>;
  /** Newest first, in cursor pages (ids are UUIDv7, so time-ordered). */
  list(query: PageQuery): Promise<{ data: ReceivedEmail[]; has_more: boolean }>;
}

/** Received mail's objects in the content bucket (adapters/s3/received-mail.ts). Keys: model.ts. */
export interface ReceivedMailStore {
  /** The raw message SES wrote; null when there is none (yet, or expired). */
  readRaw(sesMessageId: string): Promise<Uint8Array | null>;
  putParsed(id: string, bodies: ParsedBodies): Promise<void>;
  getParsed(id: string): Promise<ParsedBodies | null>;
  putAttachment(id: string, attachmentId: string, bytes: Uint8Array, contentType: string): Promise<void>;
  getAttachment(id: string, attachmentId: string): Promise<Uint8Array | null>;
  /**
   * Raw messages older than `olderThanMs` (epoch ms), oldest key first from `startAfter`, a page at a
   * time: what the sweep looks at for messages that never became a received email.
   */
  listRaw(
    startAfter: string | undefined,
    olderThanMs: number,
  ): Promise<{ keys: { key: string; sesMessageId: string; lastModifiedMs: number }[]; next?: string }>;
  /**
   * A presigned GET of an object, answered as a download (`response-content-disposition=attachment`,
   * with the filename), valid `expiresInSeconds` (or less, where the credentials expire sooner).
   */
  downloadLink(
    key: string,
    filename: string,
    expiresInSeconds: number,
  ): Promise<{ download_url: string; expires_at: string }>;
}

/**
 * SES's receipt rules (v1 API) as the service keeps them: one or more rules of its own, holding
 * between them every receiving domain as a recipient (adapters/ses/receipt-rules.ts; locally the
 * SES stand-in answers the same calls).
 */
export interface ReceiptRules {
  /** The recipients each of our rules holds now, by rule name (our rules only). */
  current(): Promise<Map<string, string[]>>;
  /**
   * Of our rules the last current() read, those whose settings (actions, scanning, TLS, enabled)
   * differ from what put writes (a replaced function, another bucket): a put rewrites them.
   */
  outdated(): Set<string>;
  /** Puts a rule with these recipients (created after `after`, or updated in place). */
  put(rule: string, recipients: string[], after: string | undefined): Promise<void>;
  /** Deletes one of our rules (no error when it is gone). */
  remove(rule: string): Promise<void>;
  /** Whether the account's active rule set is the one holding our rules. */
  activeSetHoldsOurRules(): Promise<{ active: string | null; ours: boolean }>;
}

export type { ReceiptRuleSync } from '../domains/ports.js';

/**
 * The account's receipt rule sets (SES v1), as the custom resource that sets receiving up needs
 * them (receiving/set-up.ts; adapters/ses/receipt-rules.ts). SES keeps one active set per account
 * and Region.
 */
export interface ReceiptRuleSets {
  /** The active set and its rules' names, in order; null when no set is active. */
  active(): Promise<{ name: string; rules: string[] } | null>;
  /** A set's rules' names, in order; null when there is no such set. */
  rulesOf(set: string): Promise<string[] | null>;
  /** Creates an empty set: true when it made it, false when the set existed already. */
  create(set: string): Promise<boolean>;
  /** Makes this set the active one; null: none (SES then receives no mail for the account). */
  activate(set: string | null): Promise<void>;
  /** Deletes a set (no error when it is gone). */
  delete(set: string): Promise<void>;
}

/**
 * What the receipt-rule writer last saw of the active rule set (table item `RECEIVING` / `RULES`),
 * which the domains read to say when our rules no longer receive.
 */
export interface ReceiptRuleView {
  /** The active set's name; null when none is active. */
  active_set: string | null;
  /** Whether the active set is the one holding our rules. */
  ours: boolean;
  /** The set our rules are in. */
  rule_set: string;
  checked_at: string;
}

/** Where the writer keeps its view (the domains read it through their own port). */
export interface ReceiptRuleViewStore {
  save(view: ReceiptRuleView): Promise<void>;
}
