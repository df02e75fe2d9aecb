import type { ParsedBodies, ReceivedEmail } from '../../functions/receiving/model.js';
import type { ReceivedEmailRepository, ReceivedMailStore } from '../../functions/receiving/ports.js';
import type { PageQuery } from '../../functions/shared/list.js';

/**
 * In-memory received mail, behind the receiving concept's ports (functions/receiving/ports.ts): for
 * the receiving routes' tests, which seed what the parser would have stored.
 */

export class MemoryReceivedEmails implements ReceivedEmailRepository {
  readonly emails = new Map<string, ReceivedEmail>();
  /** Every id `get` was asked for. */
  readonly reads: string[] = [];

  async store(email: ReceivedEmail) {
    const before = await this.bySesMessageId(email.ses_message_id);
    if (before) return { email: before, created: false };
    this.emails.set(email.id, structuredClone(email));
    return { email, created: true };
  }

  async markNotified(id: string) {
    const email = this.emails.get(id);
    if (email) email.notified = true;
  }

  async addRecipients(id: string, recipients: string[]) {
    const email = this.emails.get(id);
    if (!email) return null;
    email.received_for = [...new Set([...email.received_for, ...recipients])];
    return structuredClone(email);
  }

  async get(id: string) {
    this.reads.push(id);
    const email = this.emails.get(id);
    return email ? structuredClone(email) : null;
  }

  async bySesMessageId(sesMessageId: string) {
    return [...this.emails.values()].find((e) => e.ses_message_id === sesMessageId) ?? null;
  }

  /** Newest first (ids are UUIDv7, so by id, descending); `before` is the page just newer than its cursor. */
  async list(query: PageQuery) {
    const all = [...this.emails.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
    if (query.before !== undefined) {
      const newer = all.filter((e) => e.id > (query.before as string));
      const data = newer.slice(Math.max(0, newer.length - query.limit));
      return { data, has_more: newer.length > data.length };
    }
    const older =
      query.after === undefined ? all.slice(query.offset) : all.filter((e) => e.id < (query.after as string));
    return { data: older.slice(0, query.limit), has_more: older.length > query.limit };
  }
}

export interface RecordedLink {
  key: string;
  filename: string;
  expiresInSeconds: number;
}

export class MemoryReceivedMail implements ReceivedMailStore {
  readonly raw = new Map<string, Uint8Array>();
  readonly parsed = new Map<string, ParsedBodies>();
  readonly attachments = new Map<string, Uint8Array>();
  readonly links: RecordedLink[] = [];
  /** Every attachment read, as `<id>/<attachment id>`. */
  readonly attachmentReads: string[] = [];

  async readRaw(sesMessageId: string) {
    return this.raw.get(sesMessageId) ?? null;
  }
  async putParsed(id: string, bodies: ParsedBodies) {
    this.parsed.set(id, structuredClone(bodies));
  }
  async getParsed(id: string) {
    return this.parsed.get(id) ?? null;
  }
  async putAttachment(id: string, attachmentId: string, bytes: Uint8Array, _contentType: string) {
    this.attachments.set(`${id}/${attachmentId}`, bytes);
  }
  async getAttachment(id: string, attachmentId: string) {
    this.attachmentReads.push(`${id}/${attachmentId}`);
    return this.attachments.get(`${id}/${attachmentId}`) ?? null;
  }
  async listRaw() {
    return { keys: [] };
  }
  async downloadLink(key: string, filename: string, expiresInSeconds: number) {
    this.links.push({ key, filename, expiresInSeconds });
    return {
      download_url: `https://content.test/${key}?response-content-disposition=${encodeURIComponent(`attachment; filename="${filename}"`)}`,
      expires_at: new Date(Date.parse('2026-11-22T12:00:00.000Z') + expiresInSeconds * 1000).toISOString(),
    };
  }
}
