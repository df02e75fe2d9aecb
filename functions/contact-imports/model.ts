import * as z from 'zod/mini';
import type { Subscription } from '../contacts/contact.js';
import { isUuid } from '../shared/ids.js';
import { MAX_LIMIT, queryInteger } from '../shared/list.js';

/**
 * A contact import (Resend's ContactImport): what was asked, where its file is, how far it has
 * gone and what it counted. One item (adapters/dynamodb/contact-import-store.ts), whose checkpoint
 * (`offset`, `row`, `counts`) moves in the same transaction as the chunk of contacts it counts.
 */
export type ImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';
export type OnConflict = 'upsert' | 'skip';

export interface ImportCounts {
  /** Rows read (each is one of the four below). */
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** A row that failed, and why (the first MAX_FAILURES kept). `row`: its line among the data rows, from 1. */
export interface ImportFailure {
  readonly row: number;
  readonly reason: string;
}

/** A property's column: the value is kept under the property's id, converted to its type. */
export interface PropertyColumn {
  readonly key: string;
  readonly column: string;
  readonly property_id: string;
  readonly type: 'string' | 'number';
}

/** Resend's column_map, as given (null: the header's own `email`, `first_name`… columns). */
export interface ColumnMap {
  readonly email?: string;
  readonly first_name?: string;
  readonly last_name?: string;
  readonly unsubscribed?: string;
}

export interface ImportOptions {
  readonly on_conflict: OnConflict;
  readonly column_map: ColumnMap | null;
  readonly properties: readonly PropertyColumn[];
  readonly segments: readonly string[];
  readonly topics: readonly { id: string; subscription: Subscription }[];
}

export interface ContactImport extends ImportOptions {
  readonly id: string;
  readonly status: ImportStatus;
  /** The CSV's object key (under `imports/`). */
  readonly file: string;
  readonly created_at: string;
  readonly completed_at: string | null;
  readonly counts: ImportCounts;
  readonly failures: readonly ImportFailure[];
  /** The file's header, once read (the first step). */
  readonly header: readonly string[] | null;
  /** The checkpoint: the byte of the file the next row starts at, and how many data rows came before it. */
  readonly offset: number;
  readonly row: number;
  /** Why the whole import failed (an unreadable file, a mapped column missing). */
  readonly error: string | null;
}

/** How many failed rows' reasons an import keeps (the counts count them all). */
export const MAX_FAILURES = 100;

export const ZERO_COUNTS: ImportCounts = { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 };

export const IMPORT_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;

const uuidCursor = (field: string) =>
  z.optional(z.string().check(z.refine(isUuid, `${field} must be the id of a listed contact import`)));

/** GET /v1/contacts/imports: `status`, and a cursor page (Resend's `limit`, `after`, `before`). */
export const listImportsQuerySchema = z
  .object({
    status: z.optional(z.enum(IMPORT_STATUSES)),
    limit: z._default(queryInteger('limit', 1, MAX_LIMIT), 20),
    after: uuidCursor('after'),
    before: uuidCursor('before'),
  })
  .check(
    z.refine((q) => q.after === undefined || q.before === undefined, {
      message: 'give after or before, not both',
      path: ['before'],
    }),
  );
export type ListImportsQuery = z.infer<typeof listImportsQuerySchema>;

const column = z.string().check(z.minLength(1), z.maxLength(256));

/** `column_map`, Resend's JSON text in the form (or an object in our JSON body). */
export const columnMapSchema = z.strictObject({
  email: z.optional(column),
  first_name: z.optional(column),
  last_name: z.optional(column),
  unsubscribed: z.optional(column),
  properties: z.optional(
    z.record(
      z.string(),
      z.strictObject({ column, type: z.optional(z.enum(['string', 'number', 'boolean'])) }),
    ),
  ),
});
export type ColumnMapInput = z.infer<typeof columnMapSchema>;

const id = z.string().check(z.refine(isUuid, 'must be an id (a UUID)'));

/** What a create takes beside the file, every field as Resend's form has it (JSON-encoded text) or as JSON. */
export const importOptionsSchema = z.strictObject({
  column_map: z.optional(z.nullable(columnMapSchema)),
  on_conflict: z._default(z.enum(['upsert', 'skip']), 'skip'),
  // Resend's `[{id}]`; bare ids taken too.
  segments: z._default(z.array(z.union([id, z.strictObject({ id })])).check(z.maxLength(20)), []),
  topics: z._default(
    z.array(z.strictObject({ id, subscription: z.enum(['opt_in', 'opt_out']) })).check(z.maxLength(20)),
    [],
  ),
});
export type ImportOptionsInput = z.infer<typeof importOptionsSchema>;

/** Our extension's second step: the JSON body naming an upload instead of a form with the file. */
export const createFromUploadSchema = z.extend(importOptionsSchema, {
  upload_id: id,
});

/** What a stored import answers (Resend's ContactImport), with ours beside it: the first failures' reasons. */
export function toImportAnswer(job: ContactImport) {
  return {
    object: 'contact_import' as const,
    id: job.id,
    status: job.status,
    created_at: job.created_at,
    completed_at: job.completed_at,
    counts: { ...job.counts },
    // Ours: the first rows that failed and why, and why a failed import failed.
    failures: job.failures.map((f) => ({ ...f })),
    error: job.error,
  };
}
