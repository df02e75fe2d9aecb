import { LIST, page, ref, T0, T1 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_IMPORT_REQUEST_BYTES, MAX_UPLOAD_BYTES, UPLOAD_URL_SECONDS } from './limits.js';
import type { CONTACT_IMPORT_ROUTES } from './routes.js';

/** The contact imports' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const IMPORT_ID = '019abcd2-6f1e-7c3a-9b1d-2e4f6a8c0b12';
const UPLOAD_ID = '019abcd1-0a2b-7c4d-8e6f-102132435465';

const importExample = {
  object: 'contact_import',
  id: IMPORT_ID,
  status: 'completed',
  created_at: T0,
  completed_at: T1,
  counts: { total: 3, created: 1, updated: 0, skipped: 1, failed: 1 },
  failures: [{ row: 3, reason: 'email: "not an address" is not an email address' }],
  error: null,
};

export const CONTACT_IMPORT_DOCS: DocsOf<typeof CONTACT_IMPORT_ROUTES> = {
  'create-contact-import': {
    ok: 'Accepted: the import is queued and runs off the request path (GET it for its status and counts).',
    example: ref('contact_import', IMPORT_ID),
    requestExample: { upload_id: UPLOAD_ID, on_conflict: 'upsert', column_map: { email: 'Email' } },
    description: `Resend's multipart form (\`file\`, \`column_map\`, \`on_conflict\`, \`segments\`, \`topics\`) of at most ${MAX_IMPORT_REQUEST_BYTES} bytes (about 4 MB of CSV: what API Gateway and Lambda let through; Resend takes 50 MB); a larger one is a 413. Ours: a JSON body with \`upload_id\` in place of the file imports a file PUT to an upload (POST /v1/contacts/imports/uploads). Rows whose address already has a contact are skipped (\`on_conflict: "skip"\`) or updated (\`"upsert"\`); a bad row is counted \`failed\` with its reason and the rest go on.`,
  },
  'list-contact-imports': {
    ok: 'A page of contact imports.',
    example: page([importExample]),
    description: `${LIST.replace(/ \(or `offset`[^)]*\)/, '')} \`status\` keeps those of one status.`,
  },
  'get-contact-import': {
    ok: 'The import: its status and counts, and (ours) the first failed rows with their reasons.',
    example: importExample,
  },
  'create-contact-import-upload': {
    ok: 'An upload: PUT the CSV to `url` with `headers`, then POST /v1/contacts/imports with `{"upload_id": id}`.',
    example: {
      object: 'contact_import_upload',
      id: UPLOAD_ID,
      url: 'https://…s3.amazonaws.com/imports/uploads/…?X-Amz-Signature=…',
      method: 'PUT',
      headers: { 'content-type': 'text/csv' },
      max_bytes: MAX_UPLOAD_BYTES,
      expires_at: T1,
    },
    description: `Ours, for files over the form's limit: a presigned S3 PUT valid ${UPLOAD_URL_SECONDS / 60} minutes, for a file of at most ${MAX_UPLOAD_BYTES} bytes.`,
  },
};
