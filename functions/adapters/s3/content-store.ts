import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ContentStore, DownloadLink } from '../../shared/ports.js';

/**
 * How S3 answers a read of a key that holds nothing: 404 (NoSuchKey, or NotFound for a HEAD) when
 * the caller may list the bucket, 403 AccessDenied when it may not (a HEAD's answer has no body,
 * so no code). Other 403s (an expired token, a bad signature, a skewed clock) are errors to retry.
 */
const missing = (error: unknown, head = false): boolean => {
  const { name } = error as Error;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === 404) return name !== 'NoSuchBucket';
  return status === 403 && (head || name === 'AccessDenied');
};

/**
 * A download link is not signed with credentials that have less than this left, where the SDK
 * knows when they expire (credentials from a container endpoint, or AWS_CREDENTIAL_EXPIRATION):
 * they are renewed first. A presigned link dies with the session that signed it, whatever its
 * X-Amz-Expires says.
 */
export const MIN_LINK_SECONDS = 15 * 60;

/** Objects above this go up in parts (S3 takes 5 GB in one PUT; the local emulator 11 MiB). */
export const PART_BYTES = 8 * 1024 * 1024;

/**
 * Attachments and large bodies in S3, under the keys the core chooses (attachments/<email>/<id>,
 * bodies/<email>.json). The bucket is private; downloads are presigned GETs that name the file.
 */
export class S3ContentStore implements ContentStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    if (bytes.length <= PART_BYTES) {
      await this.s3.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }),
      );
      return;
    }
    const { UploadId } = await this.s3.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
    );
    try {
      const parts: { ETag?: string; PartNumber: number }[] = [];
      for (let offset = 0, part = 1; offset < bytes.length; offset += PART_BYTES, part++) {
        const { ETag } = await this.s3.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: key,
            UploadId,
            PartNumber: part,
            Body: bytes.subarray(offset, offset + PART_BYTES),
          }),
        );
        parts.push({ ETag, PartNumber: part });
      }
      await this.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      await this.s3
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId }))
        .catch(() => undefined);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Body ? await Body.transformToByteArray() : null;
    } catch (error) {
      // Missing: 404 NoSuchKey to a role that may list the bucket, 403 AccessDenied to one that may
      // not (every function here; see catalog.ts, listsContent). The roles' GetObject grants are
      // checked against the code by the grants test, so a 403 here is a missing object.
      if (error instanceof NoSuchKey || missing(error)) return null;
      throw error;
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      const { ContentLength } = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return ContentLength ?? null;
    } catch (error) {
      if (missing(error, true)) return null;
      throw error;
    }
  }

  /**
   * A presigned GET that names the file, and until when it works: the time asked, or sooner when the
   * credentials that sign it expire first (S3 refuses a link once its session has expired). Where
   * the SDK knows their expiry, credentials with less than MIN_LINK_SECONDS left are renewed first,
   * and the link's X-Amz-Expires is cut to what they have left, so the link and `expiresAt` agree.
   * Lambda's own credentials (its environment variables) carry no expiry the SDK can read: the
   * link is then stated for the time asked (docs/api.md, "Attachments").
   */
  async downloadUrl(
    key: string,
    // Without a content type (a received message's objects), S3 answers with the object's own.
    file: { filename: string; contentType?: string },
    expiresInSeconds: number,
  ): Promise<DownloadLink> {
    const credentials = this.s3.config.credentials;
    let identity = await credentials();
    const now = Date.now();
    if (identity.expiration && identity.expiration.getTime() - now < MIN_LINK_SECONDS * 1000)
      identity = await credentials({ forceRefresh: true });
    const asked = now + expiresInSeconds * 1000;
    const until = Math.min(asked, identity.expiration?.getTime() ?? asked);
    const url = await getSignedUrl(
      this.s3,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...(file.contentType ? { ResponseContentType: file.contentType } : {}),
        ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
      }),
      { expiresIn: Math.max(1, Math.floor((until - now) / 1000)), signingDate: new Date(now) },
    );
    return { url, expiresAt: new Date(until) };
  }
}
