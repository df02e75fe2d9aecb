import type { ContentStore } from '../../shared/ports.js';
import { newS3Client } from './client.js';
import { S3ContentStore } from './content-store.js';

/**
 * The S3 content store with its own client, as one module a function loads on first use
 * (content-store-on-first-use.ts): deployed, an island bundled on its own with its copy of the SDK
 * (lib/bundling.ts ISLANDS), so that none of S3's code stays in the function's cold start.
 */
export const createContentStore = (bucket: string): ContentStore => new S3ContentStore(newS3Client(), bucket);
