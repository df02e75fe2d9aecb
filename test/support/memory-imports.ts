import { Readable } from 'node:stream';
import type { ContactImport } from '../../functions/contact-imports/model.js';
import type {
  Checkpoint,
  ChunkWrite,
  CommitOutcome,
  ContactImportStore,
  ImportFiles,
  ImportQueue,
} from '../../functions/contact-imports/ports.js';
import type { Contact, Membership, TopicChoice } from '../../functions/contacts/contact.js';
import { addressKey } from '../../functions/contacts/contact.js';

/**
 * In-memory contact imports with the DynamoDB store's commit semantics (all of a chunk with its
 * checkpoint, or nothing; the checkpoint's offset and each contact's state as conditions), and a
 * crash that can be injected before or after a commit.
 */
export class MemoryImportStore implements ContactImportStore {
  readonly jobs = new Map<string, ContactImport>();
  readonly contactsByAddress = new Map<string, Contact>();
  readonly idItems = new Map<string, string>();
  readonly memberships = new Map<string, Membership>();
  readonly choices = new Map<string, TopicChoice>();
  commits = 0;
  /** Throws at this commit (1-based): `before` writes nothing, `after` writes it all then throws. */
  crash?: { at: number; when: 'before' | 'after' };

  async create(job: ContactImport) {
    this.jobs.set(job.id, structuredClone(job));
  }
  async get(id: string) {
    const job = this.jobs.get(id);
    return job && structuredClone(job);
  }
  async list() {
    return { data: [...this.jobs.values()].reverse(), has_more: false };
  }
  async contacts(addresses: readonly string[]) {
    const found = new Map<string, Contact>();
    for (const address of addresses) {
      const contact = this.contactsByAddress.get(addressKey(address));
      if (contact) found.set(addressKey(address), structuredClone(contact));
    }
    return found;
  }
  async commit(id: string, from: number, write: ChunkWrite, to: Checkpoint): Promise<CommitOutcome> {
    this.commits++;
    const crash = this.crash?.at === this.commits ? this.crash.when : undefined;
    if (crash === 'before') throw new Error('injected crash before the commit');
    const job = this.jobs.get(id);
    if (!job || job.offset !== from) return 'moved';
    for (const c of write.created) if (this.contactsByAddress.has(addressKey(c.email))) return 'contacts';
    for (const { contact, seen } of write.updated)
      if (this.contactsByAddress.get(addressKey(contact.email))?.updated_at !== seen) return 'contacts';
    for (const c of [...write.created, ...write.updated.map((u) => u.contact)]) {
      this.contactsByAddress.set(addressKey(c.email), structuredClone(c));
      this.idItems.set(c.id, addressKey(c.email));
    }
    for (const m of write.memberships) this.memberships.set(`${m.contact_id}|${m.segment_id}`, m);
    for (const c of write.choices) this.choices.set(`${c.contact_id}|${c.topic_id}`, c);
    this.jobs.set(id, { ...job, ...structuredClone(to) } as ContactImport);
    if (crash === 'after') throw new Error('injected crash after the commit');
    return 'committed';
  }
}

/** Files in memory, read back from an offset in pieces of `piece` bytes (as a network stream comes). */
export class MemoryImportFiles implements ImportFiles {
  readonly files = new Map<string, Buffer>();
  constructor(private readonly piece = 64 * 1024) {}
  async put(key: string, body: Uint8Array) {
    this.files.set(key, Buffer.from(body));
  }
  async openFrom(key: string, offset: number) {
    const file = this.files.get(key);
    if (!file) return undefined;
    const rest = file.subarray(offset);
    const pieces: Buffer[] = [];
    for (let i = 0; i < rest.length; i += this.piece) pieces.push(rest.subarray(i, i + this.piece));
    return Readable.from(pieces);
  }
  async size(key: string) {
    return this.files.get(key)?.length;
  }
  async uploadUrl(key: string) {
    return { url: `memory://${key}`, headers: {} };
  }
}

export class MemoryImportQueue implements ImportQueue {
  readonly steps: { import_id: string }[] = [];
  async enqueue(step: { import_id: string }) {
    this.steps.push(step);
  }
}
