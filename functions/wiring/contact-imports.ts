import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoContactImportStore } from '../adapters/dynamodb/contact-import-store.js';
import { audienceReads, openTable } from '../adapters/dynamodb/repositories.js';
import { newS3Client } from '../adapters/s3/client.js';
import { S3ImportFiles } from '../adapters/s3/import-files.js';
import { SqsContactImportQueue } from '../adapters/sqs/contact-import-queue.js';
import { loadConfig } from '../shared/config.js';
import { newUuid } from '../shared/ids.js';
import { systemClock } from '../shared/ports.js';
import { apiDeps } from '../wiring.js';

/** The contact imports' wiring: their items, their files under `imports/`, and their queue. */

/** POST /v1/contacts/imports: the imports, their files, the queue, and the segments, topics and properties an import names. */
export function createImportDeps() {
  const deps = apiDeps('create-contact-import', { audience: audienceReads });
  const { CONTENT_BUCKET, CONTACT_IMPORT_QUEUE_URL } = loadConfig(
    'CONTENT_BUCKET',
    'CONTACT_IMPORT_QUEUE_URL',
  );
  return {
    ...deps,
    imports: new DynamoContactImportStore(deps.table.db, deps.table.name),
    files: new S3ImportFiles(newS3Client(), CONTENT_BUCKET),
    queue: new SqsContactImportQueue(newSqsClient(), CONTACT_IMPORT_QUEUE_URL),
    newId: newUuid,
  };
}

/** GET /v1/contacts/imports and /v1/contacts/imports/{id}: the imports. */
export function readImportDeps(name: 'list-contact-imports' | 'get-contact-import') {
  const deps = apiDeps(name);
  return { ...deps, imports: new DynamoContactImportStore(deps.table.db, deps.table.name) };
}

/** POST /v1/contacts/imports/uploads: presigned PUTs under `imports/uploads/`. */
export function uploadDeps() {
  const deps = apiDeps('create-contact-import-upload');
  const { CONTENT_BUCKET } = loadConfig('CONTENT_BUCKET');
  return { ...deps, files: new S3ImportFiles(newS3Client(), CONTENT_BUCKET), newId: newUuid };
}

/** The `import-contacts` worker. */
export function importWorkerDeps() {
  const config = loadConfig('TABLE_NAME', 'CONTENT_BUCKET', 'CONTACT_IMPORT_QUEUE_URL');
  const table = openTable(config.TABLE_NAME);
  return {
    store: new DynamoContactImportStore(table.db, table.name),
    files: new S3ImportFiles(newS3Client(), config.CONTENT_BUCKET),
    queue: new SqsContactImportQueue(newSqsClient(), config.CONTACT_IMPORT_QUEUE_URL),
    clock: systemClock,
    newId: newUuid,
  };
}
