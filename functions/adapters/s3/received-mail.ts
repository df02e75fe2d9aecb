import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { attachmentKey, type ParsedBodies, parsedKey, RAW_PREFIX, rawKey } from '../../receiving/model.js';
import type { ReceivedMailStore } from '../../receiving/ports.js';
import { S3ContentStore } from './content-store.js';

/**
 * Received mail's objects in the content bucket (keys: receiving/model.ts), through the content
 * store's client and code: its reads (a missing object is null, whether S3 answers 404 or, to a role
 * without s3:ListBucket, 403), its puts (in parts above 8 MiB, as a 40 MB message's attachment may
 * be) and its presigned download links (expires_at = the time asked or the signing credentials'
 * expiry, whichever comes first; `response-content-disposition=attachment` with the filename).
 * Listing the raw messages (the sweep) needs s3:ListBucket on the `received/raw/` prefix.
 */
export class S3ReceivedMailStore implements ReceivedMailStore {
  private readonly content: S3ContentStore;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {
    this.content = new S3ContentStore(s3, bucket);
  }

  readRaw(sesMessageId: string): Promise<Uint8Array | null> {
    return this.content.get(rawKey(sesMessageId));
  }

  putParsed(id: string, bodies: ParsedBodies): Promise<void> {
    return this.content.put(
      parsedKey(id),
      new TextEncoder().encode(JSON.stringify(bodies)),
      'application/json',
    );
  }

  async getParsed(id: string): Promise<ParsedBodies | null> {
    const bytes = await this.content.get(parsedKey(id));
    return bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as ParsedBodies) : null;
  }

  putAttachment(id: string, attachmentId: string, bytes: Uint8Array, contentType: string): Promise<void> {
    return this.content.put(attachmentKey(id, attachmentId), bytes, contentType);
  }

  getAttachment(id: string, attachmentId: string): Promise<Uint8Array | null> {
    return this.content.get(attachmentKey(id, attachmentId));
  }

  async listRaw(
    startAfter: string | undefined,
    olderThanMs: number,
  ): Promise<{ keys: { key: string; sesMessageId: string; lastModifiedMs: number }[]; next?: string }> {
    const page = await this.s3.send(
      new ListObjectsV2Command({
        Bucket: this.bucket,
        Prefix: RAW_PREFIX,
        ...(startAfter ? { StartAfter: startAfter } : {}),
        MaxKeys: 1000,
      }),
    );
    const listed = page.Contents ?? [];
    const keys = listed
      .map((object) => ({
        key: object.Key ?? '',
        sesMessageId: (object.Key ?? '').slice(RAW_PREFIX.length),
        lastModifiedMs: object.LastModified?.getTime() ?? 0,
      }))
      // SES's S3 action writes a setup notice (AMAZON_SES_SETUP_NOTIFICATION) beside the messages.
      .filter((o) => o.sesMessageId && !o.sesMessageId.includes('/') && o.sesMessageId !== SETUP_NOTICE)
      .filter((o) => o.lastModifiedMs < olderThanMs);
    const last = listed[listed.length - 1]?.Key;
    return { keys, ...(page.IsTruncated && last ? { next: last } : {}) };
  }

  async downloadLink(
    key: string,
    filename: string,
    expiresInSeconds: number,
  ): Promise<{ download_url: string; expires_at: string }> {
    // The content type is the object's own (S3 answers with what it was put with).
    const { url, expiresAt } = await this.content.downloadUrl(key, { filename }, expiresInSeconds);
    return { download_url: url, expires_at: expiresAt.toISOString() };
  }
}

/** The object SES's S3 action writes when a rule is set up, to check it may write there. */
const SETUP_NOTICE = 'AMAZON_SES_SETUP_NOTIFICATION';
