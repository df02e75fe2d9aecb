import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface ContentBucketProps {
  /** Days an attachment or large body is kept. @default 30 (as Resend keeps email data) */
  readonly retentionDays?: number;
}

/**
 * Where attachments and large bodies live (keys in functions/core/attachments.ts): private (every
 * public access blocked, objects owned by the bucket), encrypted with S3-managed keys, reachable over
 * TLS only, each object expiring after the retention, unfinished multipart uploads cleaned up after a
 * day. Kept when the stack is deleted, as the table is: the table's emails point into it.
 */
export class ContentBucket extends Construct {
  public readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ContentBucketProps = {}) {
    super(scope, id);
    const days = props.retentionDays ?? 30;
    if (!Number.isInteger(days) || days < 1)
      throw new Error(`contentRetentionDays must be a whole number of days ≥ 1 (got ${days})`);
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
