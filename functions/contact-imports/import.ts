import type { AudienceReads } from '../contacts/reads.js';
import { ApiError, validationError } from '../shared/errors.js';
import { parseInput } from '../shared/parse.js';
import type { Clock } from '../shared/ports.js';
import { MAX_UPLOAD_BYTES, UPLOAD_URL_SECONDS } from './limits.js';
import {
  type ContactImport,
  type ImportOptionsInput,
  importOptionsSchema,
  type PropertyColumn,
  ZERO_COUNTS,
} from './model.js';
import type { ContactImportStore, ImportFiles, ImportQueue } from './ports.js';

/**
 * Creating an import (POST /v1/contacts/imports): its options checked against the segments, topics
 * and contact properties that exist (a 400 naming what does not), its file kept under `imports/`,
 * the import stored `queued`, and its first step put on the queue (run.ts does the rows, off the
 * request path). The file comes in the form, or was PUT to an upload of ours beforehand.
 */
export interface CreateImportDeps {
  imports: ContactImportStore;
  files: ImportFiles;
  queue: ImportQueue;
  audience: Pick<AudienceReads, 'segments' | 'topics' | 'properties'>;
  clock: Clock;
  newId: () => string;
}

export const uploadKey = (uploadId: string) => `imports/uploads/${uploadId}.csv`;
const fileKey = (importId: string) => `imports/${importId}.csv`;

/** The form's fields (Resend's: JSON-encoded text) as the options' JSON. */
export function formOptions(form: FormData): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) {
    if (name === 'file') continue;
    if (typeof value !== 'string')
      throw validationError(`${name}: must be text, not a file`, [{ field: name, message: 'must be text' }]);
    if (name === 'on_conflict') options[name] = value;
    else if (name === 'column_map' || name === 'segments' || name === 'topics') {
      try {
        options[name] = JSON.parse(value) as unknown;
      } catch {
        throw validationError(`${name}: not valid JSON`, [{ field: name, message: 'must be JSON-encoded' }]);
      }
    } else throw validationError(`${name}: unknown field`, [{ field: name, message: 'unknown field' }]);
  }
  return options;
}

async function checkOptions(deps: CreateImportDeps, input: ImportOptionsInput) {
  const segments = [...new Set(input.segments.map((s) => (typeof s === 'string' ? s : s.id)))];
  const found = segments.length ? await deps.audience.segments(segments) : new Map();
  segments.forEach((id, i) => {
    if (!found.has(id)) {
      const message = `The segment ${id} does not exist.`;
      throw validationError(message, [{ field: `segments.${i}`, message }]);
    }
  });
  const topicIds = new Set(input.topics.length ? (await deps.audience.topics()).map((t) => t.id) : []);
  input.topics.forEach((topic, i) => {
    if (!topicIds.has(topic.id)) {
      const message = `The topic ${topic.id} does not exist.`;
      throw validationError(message, [{ field: `topics.${i}.id`, message }]);
    }
  });
  // One choice a topic: the same topic twice would be two writes of one item in a chunk's
  // TransactWriteItems, which DynamoDB refuses (ValidationException), stalling the import. The
  // same subscription twice is one choice; two different ones are a 400 naming the topic.
  const topics = new Map<string, ImportOptionsInput['topics'][number]['subscription']>();
  input.topics.forEach(({ id, subscription }, i) => {
    const chosen = topics.get(id);
    if (chosen !== undefined && chosen !== subscription) {
      const message = `The topic ${id} is given twice, as ${chosen} and as ${subscription}: give it once.`;
      throw validationError(message, [{ field: `topics.${i}.subscription`, message }]);
    }
    topics.set(id, subscription);
  });
  const mapped = Object.entries(input.column_map?.properties ?? {});
  const properties: PropertyColumn[] = [];
  if (mapped.length) {
    const defined = new Map((await deps.audience.properties()).map((p) => [p.key, p]));
    for (const [key, mapping] of mapped) {
      const field = `column_map.properties.${key}`;
      const property = defined.get(key);
      if (!property) {
        const message = `The contact property "${key}" does not exist: create it first (POST /v1/contact-properties).`;
        throw validationError(message, [{ field, message }]);
      }
      if (mapping.type && mapping.type !== property.type) {
        const message = `The contact property "${key}" is a ${property.type}, not a ${mapping.type} (contact properties are strings or numbers).`;
        throw validationError(message, [{ field: `${field}.type`, message }]);
      }
      properties.push({ key, column: mapping.column, property_id: property.id, type: property.type });
    }
  }
  const { properties: _, ...columnMap } = input.column_map ?? {};
  return {
    on_conflict: input.on_conflict,
    column_map: input.column_map ? columnMap : null,
    properties,
    segments,
    topics: [...topics].map(([id, subscription]) => ({ id, subscription })),
  };
}

export async function createImport(
  deps: CreateImportDeps,
  source: { file: Uint8Array } | { upload_id: string },
  input: ImportOptionsInput,
): Promise<ContactImport> {
  const options = await checkOptions(deps, input);
  const id = deps.newId();
  let file: string;
  if ('file' in source) {
    file = fileKey(id);
    await deps.files.put(file, source.file);
  } else {
    file = uploadKey(source.upload_id);
    const size = await deps.files.size(file);
    if (size === undefined) {
      const message = `No file was uploaded for upload_id ${source.upload_id}: PUT it to the upload's url first.`;
      throw validationError(message, [{ field: 'upload_id', message }]);
    }
    if (size > MAX_UPLOAD_BYTES)
      throw new ApiError(
        413,
        'payload_too_large',
        `The uploaded file is ${size} bytes; the limit is ${MAX_UPLOAD_BYTES} bytes.`,
      );
  }
  const job: ContactImport = {
    ...options,
    id,
    status: 'queued',
    file,
    created_at: deps.clock.now().toISOString(),
    completed_at: null,
    counts: { ...ZERO_COUNTS },
    failures: [],
    header: null,
    offset: 0,
    row: 0,
    error: null,
  };
  await deps.imports.create(job);
  await deps.queue.enqueue({ import_id: id });
  return job;
}

/** The options of a form (Resend's multipart create), checked. */
export const parseFormOptions = (form: FormData): ImportOptionsInput =>
  parseInput(importOptionsSchema, formOptions(form));

/** Our upload: an id, and a presigned PUT for its file. */
export async function createUpload(deps: Pick<CreateImportDeps, 'files' | 'clock' | 'newId'>) {
  const id = deps.newId();
  const { url, headers } = await deps.files.uploadUrl(uploadKey(id), UPLOAD_URL_SECONDS);
  return {
    object: 'contact_import_upload' as const,
    id,
    url,
    method: 'PUT' as const,
    headers,
    max_bytes: MAX_UPLOAD_BYTES,
    expires_at: new Date(deps.clock.now().getTime() + UPLOAD_URL_SECONDS * 1000).toISOString(),
  };
}
