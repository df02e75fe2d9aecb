import type { Readable } from 'node:stream';
import {
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ImportFiles } from '../../contact-imports/ports.js';

/**
 * The contact imports' CSV files in the content bucket, under `imports/` (the stack deletes them
 * after a few days): put by the create route, presigned for our upload extension, and read by the
 * worker from a byte offset with a ranged GET. As the content store, a missing object answers 404,
 * or 403 to a role that may not list the bucket (function-spec.ts `content`): both are "no file".
 */
const missing = (error: unknown): boolean => {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return error instanceof NoSuchKey || status === 404 || status === 403;
};

export class S3ImportFiles implements ImportFiles {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Uint8Array): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'text/csv' }),
    );
  }

  async openFrom(key: string, offset: number): Promise<Readable | undefined> {
    try {
      const { Body } = await this.s3.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(offset > 0 ? { Range: `bytes=${offset}-` } : {}),
        }),
      );
      return Body as Readable;
    } catch (error) {
      // A range starting at the end of the file (its last row already read) is S3's 416.
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) {
        const { Readable: Stream } = await import('node:stream');
        return Stream.from([]);
      }
      if (missing(error)) return undefined;
      throw error;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (missing(error)) return undefined;
      throw error;
    }
  }

  async uploadUrl(key: string, seconds: number): Promise<{ url: string; headers: Record<string, string> }> {
    const url = await getSignedUrl(
      this.s3,
      new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: 'text/csv' }),
      { expiresIn: seconds },
    );
    return { url, headers: { 'content-type': 'text/csv' } };
  }
}
