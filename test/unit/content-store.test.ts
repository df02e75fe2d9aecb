import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { S3ContentStore } from '../../functions/adapters/s3/content-store.js';

/** S3's answers for a read, in the SDK's documented error shapes (name and HTTP status). */
const s3 = mockClient(S3Client);
afterEach(() => s3.reset());
const store = new S3ContentStore(new S3Client({ region: 'us-east-1' }), 'bucket');
const error = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('S3ContentStore: what a missing object looks like, whatever the role may do', () => {
  it.each([
    ['NoSuchKey (a role that may list the bucket)', error('NoSuchKey', 404)],
    ['AccessDenied (a role without s3:ListBucket: every function here)', error('AccessDenied', 403)],
  ])('GetObject answered %s: missing', async (_, answer) => {
    s3.on(GetObjectCommand).rejects(answer);
    expect(await store.get('bodies/em_x.json')).toBeNull();
  });

  it.each([
    ['ExpiredToken', error('ExpiredToken', 403)],
    ['RequestTimeTooSkewed', error('RequestTimeTooSkewed', 403)],
    ['NoSuchBucket', error('NoSuchBucket', 404)],
    ['a 503', error('SlowDown', 503)],
  ])('GetObject answered %s: an error, retried, never "missing"', async (_, answer) => {
    s3.on(GetObjectCommand).rejects(answer);
    await expect(store.get('bodies/em_x.json')).rejects.toBe(answer);
  });

  it('HeadObject answered 403 or 404 (no body, so no code): missing', async () => {
    s3.on(HeadObjectCommand).rejectsOnce(error('Unknown', 403)).rejectsOnce(error('NotFound', 404));
    expect(await store.size('attachments/em_x/a')).toBeNull();
    expect(await store.size('attachments/em_x/a')).toBeNull();
  });
});
