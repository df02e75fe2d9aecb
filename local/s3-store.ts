import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * fauxqs's S3 keeps objects in memory. `npm start` keeps them on disk too (under
 * `.local-data/s3/<bucket>/`, one file per object and one for its content type), so attachments
 * and large bodies survive a restart as the emails pointing at them do. fauxqs exports only its app,
 * so its store class is taken from its own files (fauxqs is pinned in package.json; a layout change
 * fails here loudly, at start).
 */
interface S3StoreLike {
  createBucket(name: string): void;
  putObject(
    bucket: string,
    key: string,
    body: Buffer,
    contentType?: string,
    metadata?: Record<string, string>,
  ): unknown;
  completeMultipartUpload(
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
  ): { key: string; body: Buffer; contentType: string };
  deleteObject(bucket: string, key: string): void;
  deleteObjects(bucket: string, keys: string[]): string[];
}

type S3StoreClass = new () => S3StoreLike & { multipartUploads: Map<string, { bucket: string }> };

/** A class from fauxqs's own files (it exports only its app); a layout change fails here, at start. */
async function fauxqsClass<T>(path: string, name: string): Promise<T> {
  const app = fileURLToPath(import.meta.resolve('fauxqs'));
  const module = (await import(pathToFileURL(join(dirname(app), path)).href)) as Record<string, unknown>;
  if (typeof module[name] !== 'function') throw new Error(`fauxqs's ${name} was not found in ${path}`);
  return module[name] as T;
}

/** The stores fauxqs's app is built with: its own SQS and SNS stores, and S3 kept under `dir`. */
export async function fauxqsStores(dir: string | undefined, buckets: string[]) {
  const [SqsStore, SnsStore] = await Promise.all([
    fauxqsClass<new () => object>('sqs/sqsStore.js', 'SqsStore'),
    fauxqsClass<new () => object>('sns/snsStore.js', 'SnsStore'),
  ]);
  return { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: await s3Store(dir, buckets) };
}

const fileOf = (dir: string, bucket: string, key: string) => join(dir, bucket, encodeURIComponent(key));

/** A fauxqs S3 store that writes every object under `dir` and loads them back (none: memory only). */
async function s3Store(dir: string | undefined, buckets: string[]) {
  const Base = await fauxqsClass<S3StoreClass>('s3/s3Store.js', 'S3Store');
  const save = (bucket: string, key: string, body: Buffer, contentType: string) => {
    if (!dir) return;
    mkdirSync(join(dir, bucket), { recursive: true });
    writeFileSync(fileOf(dir, bucket, key), body);
    writeFileSync(`${fileOf(dir, bucket, key)}.type`, contentType);
  };
  const remove = (bucket: string, key: string) => {
    if (!dir) return;
    rmSync(fileOf(dir, bucket, key), { force: true });
    rmSync(`${fileOf(dir, bucket, key)}.type`, { force: true });
  };
  class PersistentS3Store extends Base {
    override putObject(
      bucket: string,
      key: string,
      body: Buffer,
      contentType?: string,
      metadata?: Record<string, string>,
    ) {
      const stored = super.putObject(bucket, key, body, contentType, metadata);
      save(bucket, key, body, contentType ?? 'application/octet-stream');
      return stored;
    }
    override completeMultipartUpload(uploadId: string, parts: { partNumber: number; etag: string }[]) {
      const bucket = this.multipartUploads.get(uploadId)?.bucket;
      const stored = super.completeMultipartUpload(uploadId, parts);
      if (bucket) save(bucket, stored.key, stored.body, stored.contentType);
      return stored;
    }
    override deleteObject(bucket: string, key: string) {
      super.deleteObject(bucket, key);
      remove(bucket, key);
    }
    override deleteObjects(bucket: string, keys: string[]) {
      const deleted = super.deleteObjects(bucket, keys);
      for (const key of deleted) remove(bucket, key);
      return deleted;
    }
  }
  const store = new PersistentS3Store();
  for (const bucket of buckets) {
    store.createBucket(bucket);
    if (!dir) continue;
    let files: string[] = [];
    try {
      files = readdirSync(join(dir, bucket));
    } catch {
      continue;
    }
    for (const file of files.filter((f) => !f.endsWith('.type'))) {
      const path = join(dir, bucket, file);
      let type = 'application/octet-stream';
      try {
        type = readFileSync(`${path}.type`, 'utf8');
      } catch {}
      Base.prototype.putObject.call(store, bucket, decodeURIComponent(file), readFileSync(path), type);
    }
  }
  return store;
}
