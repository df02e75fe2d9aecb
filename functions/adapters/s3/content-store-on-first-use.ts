import type { ContentStore } from '../../shared/ports.js';
import { onFirstUse } from '../on-first-use.js';

/** The S3 content store (client-s3 and its presigner: ~150 KB), built on first use. */
export function contentStoreOnFirstUse(bucket: string): ContentStore {
  const store = onFirstUse(async () =>
    (await import('./content-store-island.js')).createContentStore(bucket),
  );
  return {
    put: async (key, bytes, contentType) => (await store()).put(key, bytes, contentType),
    get: async (key) => (await store()).get(key),
    size: async (key) => (await store()).size(key),
    downloadUrl: async (key, file, expiresInSeconds) =>
      (await store()).downloadUrl(key, file, expiresInSeconds),
  };
}
