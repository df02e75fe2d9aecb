import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
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
}

/**
 * Where attachments and large bodies live (keys in functions/emails/attachments.ts): private (every
 * public access blocked, objects owned by the bucket), encrypted with S3-managed keys, reachable over
 * TLS only, each object expiring after the retention, unfinished multipart uploads cleaned up after a
 * day. Kept when the stack is deleted, as the table is: the table's emails point into it.
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
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        {
          id: 'expire-content',
          expiration: Duration.days(days),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "Objects are written and read only by this stack's functions, whose calls are logged; server access logs would need a second bucket and cost more than the content they describe.",
    });
  }
}
