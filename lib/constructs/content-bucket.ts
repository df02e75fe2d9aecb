import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { RECEIVED_PREFIX } from '../../functions/receiving/model.js';
import type { ContentPrefix } from '../../functions/shared/function-spec.js';
import { MAX_SCHEDULE_DAYS } from '../../functions/shared/limits.js';

/**
 * The shortest retention: an email may be scheduled 30 days ahead with its attachments stored when
 * it is accepted, and S3 expires an object at the first midnight (UTC) after its days are up, so a
 * day's margin keeps every scheduled email's content until it is sent.
 */
export const MIN_CONTENT_RETENTION_DAYS = MAX_SCHEDULE_DAYS + 1;

export interface ContentBucketProps {
  /**
   * Days an attachment or large body is kept, from when its email was accepted; at least
   * MIN_CONTENT_RETENTION_DAYS. @default 31 (Resend keeps email data 30 days; a scheduled email waits up to 30)
   */
  readonly retentionDays?: number;
  /** Days received mail (under `received/`) is kept, from when it arrived (at least 1). @default 30 */
  readonly receivedRetentionDays?: number;
}

/** The prefixes of sent mail's content, under `retentionDays` (functions/emails/attachments.ts). */
export const SENT_CONTENT_PREFIXES = ['attachments/', 'bodies/'] as const satisfies readonly ContentPrefix[];
export const DEFAULT_RECEIVED_RETENTION_DAYS = 30;
/**
 * Days a contact import's CSV (under `imports/`: uploaded through our presigned URL, or kept from a
 * multipart request) is kept: an import reads it within the hour (a million rows in about 24 minutes:
 * docs/scale.md), so a week leaves room for a stalled one to be resumed, and no list lingers.
 */
export const IMPORT_RETENTION_DAYS = 7;
const IMPORTS_PREFIX = 'imports/' satisfies ContentPrefix;

/**
 * Where attachments and large bodies live (keys in functions/emails/attachments.ts): private (every
 * public access blocked, objects owned by the bucket), encrypted with S3-managed keys, reachable over
 * TLS only, each object expiring after its prefix's retention (sent mail's content after
 * `retentionDays`, received mail's after `receivedRetentionDays`, contact imports' CSV files after
 * IMPORT_RETENTION_DAYS: a rule per prefix, so none cuts another short), unfinished multipart uploads cleaned up after a day. Kept when the stack
 * is deleted, as the table is: the table's emails point into it.
 */
export class ContentBucket extends Construct {
  public readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ContentBucketProps = {}) {
    super(scope, id);
    const days = props.retentionDays ?? MIN_CONTENT_RETENTION_DAYS;
    if (!Number.isInteger(days) || days < MIN_CONTENT_RETENTION_DAYS)
      throw new Error(
        `contentRetentionDays must be a whole number of days ≥ ${MIN_CONTENT_RETENTION_DAYS}, as an email may be scheduled ${MAX_SCHEDULE_DAYS} days ahead with its attachments stored when it is accepted (got ${days})`,
      );
    const receivedDays = props.receivedRetentionDays ?? DEFAULT_RECEIVED_RETENTION_DAYS;
    if (!Number.isInteger(receivedDays) || receivedDays < 1)
      throw new Error(`receivedRetentionDays must be a whole number of days ≥ 1 (got ${receivedDays})`);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        // One rule a prefix: S3's lifecycle filter takes one prefix (or an And of tags).
        ...SENT_CONTENT_PREFIXES.map((prefix) => ({
          id: `expire-content-${prefix.slice(0, -1)}`,
          prefix,
          expiration: Duration.days(days),
        })),
        { id: 'expire-received', prefix: RECEIVED_PREFIX, expiration: Duration.days(receivedDays) },
        { id: 'expire-imports', prefix: IMPORTS_PREFIX, expiration: Duration.days(IMPORT_RETENTION_DAYS) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Objects are written and read only by this stack's functions, whose calls are logged; server access logs would need a second bucket and cost more than the content they describe.",
    });
  }
}
