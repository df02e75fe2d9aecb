import * as z from 'zod/mini';
import { MAX_IMPORT_REQUEST_BYTES } from './limits.js';
import { IMPORT_STATUSES } from './model.js';

/** The contact imports' answers (Resend's ContactImport, and ours beside it). */

export const importReferenceSchema = z.object({ object: z.literal('contact_import'), id: z.string() });

const count = z.number().check(z.int(), z.gte(0));

export const contactImportSchema = z.object({
  object: z.literal('contact_import'),
  id: z.string(),
  status: z.enum(IMPORT_STATUSES),
  created_at: z.string(),
  completed_at: z.nullable(z.string()),
  counts: z.object({ total: count, created: count, updated: count, skipped: count, failed: count }),
  failures: z.array(z.object({ row: count, reason: z.string() })),
  error: z.nullable(z.string()),
});

/** POST /v1/contacts/imports/uploads: where to PUT the file, and the id to import it by (ours). */
export const importUploadSchema = z.object({
  object: z.literal('contact_import_upload'),
  id: z.string(),
  url: z.string(),
  method: z.literal('PUT'),
  headers: z.record(z.string(), z.string()),
  max_bytes: count,
  expires_at: z.string(),
});

const jsonText = (description: string) => ({ type: 'string', description });

/** The form Resend's SDK sends (`contacts.imports.create`), as JSON Schema. */
export const formSchema = () => ({
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description: `The CSV file, with a header row. At most ${MAX_IMPORT_REQUEST_BYTES} bytes of form.`,
    },
    column_map: jsonText(
      'JSON: `{email, first_name, last_name, unsubscribed, properties: {key: {column, type}}}`, each a column of the header.',
    ),
    on_conflict: { type: 'string', enum: ['upsert', 'skip'], default: 'skip' },
    segments: jsonText('JSON: `[{"id": …}]`, the segments every imported contact joins.'),
    topics: jsonText(
      'JSON: `[{"id": …, "subscription": "opt_in" | "opt_out"}]`, set on every imported contact.',
    ),
  },
});
