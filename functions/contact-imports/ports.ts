import type { Readable } from 'node:stream';
import type { Contact, Membership, TopicChoice } from '../contacts/contact.js';
import type { PageQuery } from '../shared/list.js';
import type { ContactImport, ImportCounts, ImportFailure, ImportStatus } from './model.js';

/** What one chunk of rows writes, all of it with the import's checkpoint in one transaction. */
export interface ChunkWrite {
  /** New contacts: put only where no contact has the address yet. */
  readonly created: readonly Contact[];
  /** Contacts changed (upsert): put only where the contact is still as it was read (`seen`: its updated_at). */
  readonly updated: readonly { contact: Contact; seen: string }[];
  readonly memberships: readonly Membership[];
  readonly choices: readonly TopicChoice[];
}

/** The checkpoint a chunk moves the import to. */
export interface Checkpoint {
  readonly offset: number;
  readonly row: number;
  readonly counts: ImportCounts;
  readonly failures: readonly ImportFailure[];
  readonly header: readonly string[];
  readonly status: ImportStatus;
  readonly completed_at: string | null;
  readonly error: string | null;
  readonly updated_at: string;
}

/**
 * Why a chunk's commit did not happen: `moved`, the checkpoint is no longer where this step read
 * it (another step of the same import went on: this one stops); `contacts`, a contact changed
 * since it was read (read them again and retry the chunk).
 */
export type CommitOutcome = 'committed' | 'moved' | 'contacts';

/** The imports' items (adapters/dynamodb/contact-import-store.ts). */
export interface ContactImportStore {
  create(job: ContactImport): Promise<void>;
  get(id: string, consistent?: boolean): Promise<ContactImport | undefined>;
  list(query: PageQuery & { status?: ImportStatus }): Promise<{ data: ContactImport[]; has_more: boolean }>;
  /** The current contacts of these addresses (strongly consistent), by address lower-cased. */
  contacts(addresses: readonly string[]): Promise<Map<string, Contact>>;
  /**
   * The chunk's writes and the checkpoint, in one transaction, on condition that the checkpoint is
   * still at `from` (the offset this step read): so a chunk is counted and written once, or not at all.
   */
  commit(id: string, from: number, write: ChunkWrite, to: Checkpoint): Promise<CommitOutcome>;
}

/** The imports' files, under `imports/` in the content bucket (adapters/s3/import-files.ts). */
export interface ImportFiles {
  put(key: string, body: Uint8Array): Promise<void>;
  /** The file from this byte on (a ranged read). Undefined: no such file. */
  openFrom(key: string, offset: number): Promise<Readable | undefined>;
  /** Its size in bytes, or undefined when there is none (an upload not made). */
  size(key: string): Promise<number | undefined>;
  /** A presigned PUT for an upload of at most `maxBytes`, valid `seconds`. */
  uploadUrl(key: string, seconds: number): Promise<{ url: string; headers: Record<string, string> }>;
}

/** The imports' queue: one message a step. */
export interface ImportQueue {
  enqueue(step: { import_id: string }): Promise<void>;
}
