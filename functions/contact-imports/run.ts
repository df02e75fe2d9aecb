import { parse } from 'csv-parse';
import type { Contact, Membership, TopicChoice } from '../contacts/contact.js';
import { addressKey } from '../contacts/contact.js';
import type { Clock } from '../shared/ports.js';
import { type ImportCounts, type ImportFailure, MAX_FAILURES } from './model.js';
import type { Checkpoint, ChunkWrite, ContactImportStore, ImportFiles, ImportQueue } from './ports.js';
import { type Columns, type RowContact, resolveColumns, rowContact } from './rows.js';

/**
 * One step of an import, off the request path (the `import-contacts` worker, one queue message a
 * step): read the file from the import's checkpoint (a ranged read from its byte offset), turn rows
 * into contacts a chunk at a time, and commit each chunk's contacts, memberships and choices WITH
 * the checkpoint that counts them, in one transaction conditioned on the checkpoint not having
 * moved. A crash anywhere leaves the import at its last commit: the next step (the message again,
 * redelivered) starts there, so no row is skipped and none is written or counted twice. A step
 * stops before its function's time runs out and hands the rest to a new message.
 */
export interface RunDeps {
  store: ContactImportStore;
  files: ImportFiles;
  queue: ImportQueue;
  clock: Clock;
  newId: () => string;
}

export interface StepLimits {
  /** True when the step must stop (its function's time nearly gone). */
  readonly timeUp?: () => boolean;
  /** At most this many rows a step (then the next message goes on). @default 50,000 */
  readonly maxRows?: number;
  /** Items a transaction may hold, the checkpoint among them (DynamoDB's limit: 100). */
  readonly maxItems?: number;
}

export type StepOutcome = 'completed' | 'failed' | 'continued' | 'stopped' | 'absent';

const MAX_ITEMS = 100;
const MAX_CHUNK_ROWS = 500;
/** How often a chunk is read again and retried when a contact changed under it. */
const CONTACT_RETRIES = 5;

interface PendingRow {
  readonly row: number;
  readonly end: number;
  readonly contact: RowContact | { reason: string };
}

const isRow = (c: RowContact | { reason: string }): c is RowContact => 'email' in c;

export async function runImportStep(
  deps: RunDeps,
  importId: string,
  limits: StepLimits = {},
): Promise<StepOutcome> {
  const job = await deps.store.get(importId, true);
  if (!job) return 'absent';
  if (job.status === 'completed' || job.status === 'failed') return job.status;
  const maxItems = Math.min(limits.maxItems ?? MAX_ITEMS, MAX_ITEMS);
  const maxRows = limits.maxRows ?? 50_000;
  const perContact = 2 + job.segments.length + job.topics.length;

  let from = job.offset;
  let row = job.row;
  let counts: ImportCounts = { ...job.counts };
  let failures: ImportFailure[] = [...job.failures];
  let header = job.header;
  let columns: Columns | undefined;
  let pending: PendingRow[] = [];
  const now = () => deps.clock.now().toISOString();

  const checkpoint = (over: Partial<Checkpoint>): Checkpoint => ({
    offset: from,
    row,
    counts,
    failures,
    header: header ?? [],
    status: 'in_progress',
    completed_at: null,
    error: null,
    updated_at: now(),
    ...over,
  });

  /** Commits the pending rows (and the checkpoint past them): false when another step moved it on. */
  const flush = async (over: Partial<Checkpoint> = {}): Promise<boolean> => {
    const last = pending[pending.length - 1];
    for (let attempt = 0; ; attempt++) {
      const valid = pending.filter((p) => isRow(p.contact)).map((p) => p.contact as RowContact);
      const existing = valid.length
        ? await deps.store.contacts(valid.map((c) => c.email))
        : new Map<string, Contact>();
      const at = now();
      const write = {
        created: [] as Contact[],
        updated: [] as { contact: Contact; seen: string }[],
        memberships: [] as Membership[],
        choices: [] as TopicChoice[],
      };
      const next: ImportCounts = { ...counts };
      const nextFailures = [...failures];
      for (const p of pending) {
        next.total++;
        if (!isRow(p.contact)) {
          next.failed++;
          if (nextFailures.length < MAX_FAILURES) nextFailures.push({ row: p.row, reason: p.contact.reason });
          continue;
        }
        const given = p.contact;
        const found = existing.get(addressKey(given.email));
        let contact: Contact;
        if (found && job.on_conflict === 'skip') {
          next.skipped++;
          continue;
        }
        if (found) {
          contact = {
            ...found,
            first_name: given.first_name ?? found.first_name,
            last_name: given.last_name ?? found.last_name,
            unsubscribed: given.unsubscribed ?? found.unsubscribed,
            props: { ...found.props, ...given.props },
            updated_at: at,
          };
          write.updated.push({ contact, seen: found.updated_at });
          next.updated++;
        } else {
          contact = {
            id: deps.newId(),
            email: given.email,
            first_name: given.first_name ?? null,
            last_name: given.last_name ?? null,
            unsubscribed: given.unsubscribed ?? false,
            props: given.props,
            created_at: at,
            updated_at: at,
          };
          write.created.push(contact);
          next.created++;
        }
        for (const segment_id of job.segments)
          write.memberships.push({ contact_id: contact.id, segment_id, created_at: at });
        for (const topic of job.topics)
          write.choices.push({
            contact_id: contact.id,
            topic_id: topic.id,
            subscription: topic.subscription,
            updated_at: at,
          });
      }
      const to = checkpoint({
        offset: last?.end ?? from,
        row: last?.row ?? row,
        counts: next,
        failures: nextFailures,
        ...over,
      });
      const outcome = await deps.store.commit(importId, from, write as ChunkWrite, to);
      if (outcome === 'moved') return false;
      if (outcome === 'committed') {
        from = to.offset;
        row = to.row;
        counts = next;
        failures = nextFailures;
        pending = [];
        return true;
      }
      if (attempt >= CONTACT_RETRIES)
        throw new Error(`contact import ${importId}: contacts kept changing under a chunk`);
    }
  };

  const fail = async (error: string): Promise<StepOutcome> => {
    await flush({ status: 'failed', completed_at: now(), error });
    return 'failed';
  };

  const stream = await deps.files.openFrom(job.file, job.offset);
  if (!stream) return fail('The file is gone: it was not uploaded, or it expired before the import ran.');
  const parser = parse({
    bom: job.offset === 0,
    info: true,
    relax_column_count: true,
    skip_empty_lines: true,
    record_delimiter: ['\r\n', '\n', '\r'],
  });
  stream.on('error', (error) => parser.destroy(error));
  stream.pipe(parser);

  let rowsThisStep = 0;
  let validInChunk = 0;
  let addresses = new Set<string>();
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { bytes: number };
    }>) {
      const end = job.offset + info.bytes;
      if (!header) {
        header = record.map((h) => h.trim());
        const resolved = resolveColumns(header, job.column_map, job.properties);
        if ('error' in resolved) return fail(resolved.error);
        columns = resolved;
        // The header read and kept: the rows start past it.
        if (!(await flush({ offset: end }))) return 'stopped';
        continue;
      }
      if (!columns) {
        const resolved = resolveColumns(header, job.column_map, job.properties);
        if ('error' in resolved) return fail(resolved.error);
        columns = resolved;
      }
      const contact = rowContact(record, columns);
      if (isRow(contact)) {
        const address = addressKey(contact.email);
        // DynamoDB takes one operation an item in a transaction: a repeated address starts a new chunk.
        if (addresses.has(address) || (validInChunk + 1) * perContact + 1 > maxItems) {
          if (!(await flush())) return 'stopped';
          validInChunk = 0;
          addresses = new Set();
        }
        addresses.add(address);
        validInChunk++;
      }
      pending.push({ row: row + pending.length + 1, end, contact });
      rowsThisStep++;
      if (pending.length >= MAX_CHUNK_ROWS) {
        if (!(await flush())) return 'stopped';
        validInChunk = 0;
        addresses = new Set();
      }
      if (rowsThisStep >= maxRows || limits.timeUp?.()) {
        if (!(await flush())) return 'stopped';
        await deps.queue.enqueue({ import_id: importId });
        return 'continued';
      }
    }
  } catch (error) {
    if (!(error instanceof Error) || !('code' in error) || !String(error.code).startsWith('CSV_'))
      throw error;
    const line = (error as { lines?: number }).lines;
    if (pending.length && !(await flush())) return 'stopped';
    return fail(
      `The file is not valid CSV${line ? ` (line ${line} of this step's read)` : ''}: ${error.message}`,
    );
  } finally {
    stream.destroy();
  }
  if (!header) return fail('The file is empty: it needs a header row naming its columns.');
  return (await flush({ status: 'completed', completed_at: now() })) ? 'completed' : 'stopped';
}
