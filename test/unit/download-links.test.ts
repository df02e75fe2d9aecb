import { S3Client } from '@aws-sdk/client-s3';
import type { AwsCredentialIdentity } from '@smithy/types';
import { describe, expect, it } from 'vitest';
import { MIN_LINK_SECONDS, S3ContentStore } from '../../functions/adapters/s3/content-store.js';
import { listAttachments } from '../../functions/emails/attachment-reads.js';
import { DOWNLOAD_URL_SECONDS, type StoredAttachment } from '../../functions/emails/attachments.js';
import { newEmailId } from '../../functions/shared/ids.js';
import { MemoryContentStore } from '../support/fakes.js';

/**
 * A presigned link dies with the session that signed it, whatever its X-Amz-Expires says. The
 * credentials here are the SDK's documented identity shape (AwsCredentialIdentity, `expiration` a
 * Date, as the container endpoint's and AWS_CREDENTIAL_EXPIRATION give them); presigning is local,
 * so no S3 is called.
 */
const MINUTE = 60_000;
const credentials = (id: string, expiresInMs?: number): AwsCredentialIdentity => ({
  accessKeyId: id,
  secretAccessKey: 'secret',
  sessionToken: 'token',
  ...(expiresInMs === undefined ? {} : { expiration: new Date(Date.now() + expiresInMs) }),
});

/** A store whose client's credentials come from `provide` (told whether a refresh is forced). */
function storeWith(provide: (forceRefresh: boolean) => AwsCredentialIdentity) {
  const calls: boolean[] = [];
  const s3 = new S3Client({
    region: 'us-east-1',
    credentials: async (options?: { forceRefresh?: boolean }) => {
      calls.push(Boolean(options?.forceRefresh));
      return provide(Boolean(options?.forceRefresh));
    },
  });
  return { store: new S3ContentStore(s3, 'bucket'), calls };
}

const link = (store: S3ContentStore) =>
  store.downloadUrl('attachments/em_x/a', { filename: 'a.pdf', contentType: 'application/pdf' }, 3600);
const signedBy = (url: string) => new URL(url).searchParams.get('X-Amz-Credential')?.split('/')[0];
const expiresParam = (url: string) => Number(new URL(url).searchParams.get('X-Amz-Expires'));

describe('download links say when they stop working', () => {
  it('credentials that expire before the time asked: the link ends with them, and says so', async () => {
    const { store } = storeWith(() => credentials('ASIASHORT', 40 * MINUTE));
    const expiring = Date.now() + 40 * MINUTE;
    const { url, expiresAt } = await link(store);
    expect(signedBy(url)).toBe('ASIASHORT');
    expect(Math.abs(expiresAt.getTime() - expiring)).toBeLessThan(5_000);
    // The link's own X-Amz-Expires agrees with expiresAt, not with the hour asked.
    expect(expiresParam(url)).toBeLessThanOrEqual(40 * 60);
    expect(expiresParam(url)).toBeGreaterThan(39 * 60);
  });

  it(`credentials with less than ${MIN_LINK_SECONDS / 60} minutes left are renewed before signing`, async () => {
    const { store, calls } = storeWith((forced) =>
      forced ? credentials('ASIAFRESH', 6 * 60 * MINUTE) : credentials('ASIASTALE', 10 * MINUTE),
    );
    const before = Date.now();
    const { url, expiresAt } = await link(store);
    expect(calls).toContain(true);
    expect(signedBy(url)).toBe('ASIAFRESH');
    expect(expiresParam(url)).toBe(3600);
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3600_000);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);
  });

  it('credentials that outlive the link: the time asked', async () => {
    const { store, calls } = storeWith(() => credentials('ASIALONG', 12 * 60 * MINUTE));
    const before = Date.now();
    const { url, expiresAt } = await link(store);
    expect(calls).not.toContain(true);
    expect(expiresParam(url)).toBe(3600);
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3600_000);
  });

  it("the API's expires_at is the link's, not the time asked", async () => {
    const content = new MemoryContentStore();
    content.linksUntil = new Date(Date.now() + 20 * MINUTE);
    const id = newEmailId();
    const file: StoredAttachment = {
      id: 'att_1',
      filename: 'a.pdf',
      content_type: 'application/pdf',
      content_disposition: 'attachment',
      content_id: null,
      size: 3,
    };
    const answer = await listAttachments({ emails: { getAttachments: async () => [file] }, content }, id);
    expect(answer.data[0]?.expires_at).toBe(content.linksUntil.toISOString());
    // And without such credentials, the time asked.
    content.linksUntil = undefined;
    const before = Date.now();
    const [full] = (await listAttachments({ emails: { getAttachments: async () => [file] }, content }, id))
      .data;
    expect(Date.parse(full?.expires_at as string)).toBeGreaterThanOrEqual(
      before + DOWNLOAD_URL_SECONDS * 1000 - 1,
    );
  });
});
