import type { RecordedCall } from '../../local/invocation.js';
import type { Statement } from './template.js';

/** A resource as the synthesized template names it (by logical id), for one AWS call. */
export type ResourceRef =
  | { kind: 'table'; tableId: string }
  | { kind: 'index'; tableId: string; indexName: string }
  | { kind: 'queue'; queueId: string }
  | { kind: 'ses-identity' }
  /** An action IAM has no resource type for: only `*` grants it. */
  | { kind: 'any' }
  | { kind: 'ses-configuration-set'; configurationSetId: string }
  /** A domain's own configuration set, made at run time: granted on `configuration-set/<prefix>*`. */
  | { kind: 'ses-domain-configuration-set'; prefix: string }
  /** An S3 object: granted on `<bucket ARN>/<prefix>*` for a prefix of its key. */
  | { kind: 'object'; bucketId: string; key: string }
  /** An S3 bucket itself (s3:ListBucket): granted on the bucket's ARN. */
  | { kind: 'bucket'; bucketId: string }
  /** A listing of the bucket's keys under a prefix (s3:ListBucket, its s3:prefix condition). */
  | { kind: 'bucket-prefix'; bucketId: string; prefix: string }
  /** A Secrets Manager secret: granted on its ARN (its Ref). */
  | { kind: 'secret'; secretId: string };

export interface Requirement {
  action: string;
  resource: ResourceRef;
}

/** IAM authorises SQS batch operations as their single-message action. */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/** IAM authorises a multipart upload's steps, and HEAD, as the single-object action. */
const S3_ACTIONS: Record<string, string> = {
  CreateMultipartUpload: 'PutObject',
  UploadPart: 'PutObject',
  CompleteMultipartUpload: 'PutObject',
  HeadObject: 'GetObject',
  // A listing of keys is authorised as ListBucket (on the bucket, with its s3:prefix).
  ListObjectsV2: 'ListBucket',
  ListObjects: 'ListBucket',
};

/**
 * What IAM checks for one recorded call: the action(s) and the resource(s) they are checked
 * against (per the service authorization reference: SES SendEmail is authorised against both the
 * sender identity and the configuration set; CreateEmailIdentity with tags needs TagResource too).
 */
export function requirementsOf(
  call: RecordedCall,
  ids: {
    tableId: string;
    queueIdByUrl: (url: string) => string | undefined;
    configurationSetId: string;
    bucketIdByName?: (name: string) => string | undefined;
    /** The logical id of the secret a local secret id stands for. */
    secretIdByName?: (name: string) => string | undefined;
    /**
     * Domains' own sets: the prefix locally (a set name with it is a domain's) and in the template.
     * Absent: every set is the stack's.
     */
    domainSets?: { localPrefix: string; templatePrefix: string };
  },
): Requirement[] {
  switch (call.service) {
    case 'DynamoDB':
      // A transaction is authorised item by item, as each item's own action.
      if (call.itemActions)
        return call.itemActions.map((action) => ({
          action: `dynamodb:${action}`,
          resource: { kind: 'table', tableId: ids.tableId } as const,
        }));
      // A transaction is authorised item by item, as the item's own action ('Using IAM with DynamoDB
      // transactions': there is no dynamodb:TransactWriteItems action to grant).
      if (call.transactItems)
        return [...new Set(call.transactItems)].map((item) => ({
          action: `dynamodb:${TRANSACT_ITEM_ACTIONS[item] ?? item}`,
          resource: { kind: 'table' as const, tableId: ids.tableId },
        }));
      return [
        {
          action: `dynamodb:${call.operation}`,
          resource: call.indexName
            ? { kind: 'index', tableId: ids.tableId, indexName: call.indexName }
            : { kind: 'table', tableId: ids.tableId },
        },
      ];
    case 'SQS': {
      const queueId = call.queueUrl ? ids.queueIdByUrl(call.queueUrl) : undefined;
      if (!queueId) throw new Error(`SQS call to an unknown queue: ${JSON.stringify(call)}`);
      return [
        {
          action: `sqs:${SQS_ACTIONS[call.operation] ?? call.operation}`,
          resource: { kind: 'queue', queueId },
        },
      ];
    }
    // Secrets Manager (the extension's GetSecretValue is the function's own, with its role).
    case 'SecretsManager': {
      const secretId = call.secretId ? ids.secretIdByName?.(call.secretId) : undefined;
      if (!secretId) throw new Error(`Secrets Manager call to an unknown secret: ${JSON.stringify(call)}`);
      return [{ action: `secretsmanager:${call.operation}`, resource: { kind: 'secret', secretId } }];
    }
    // SES v1: receipt rules and rule sets only, which IAM gives no resource type.
    case 'SES':
      return [{ action: `ses:${call.operation}`, resource: { kind: 'any' } }];
    case 'SESv2': {
      const identity = { kind: 'ses-identity' } as const;
      // The account's suppression list and its sending quota: IAM has no resource type for them.
      if (call.operation === 'DeleteSuppressedDestination' || call.operation === 'GetAccount')
        return [{ action: `ses:${call.operation}`, resource: { kind: 'any' } }];
      const setOf = (name: string | undefined): ResourceRef =>
        ids.domainSets && name?.startsWith(ids.domainSets.localPrefix)
          ? { kind: 'ses-domain-configuration-set', prefix: ids.domainSets.templatePrefix }
          : { kind: 'ses-configuration-set', configurationSetId: ids.configurationSetId };
      // Raw content (an SMTP email's MIME) is authorised as ses:SendRawEmail, on the same resources.
      if (call.operation === 'SendEmail' || call.operation === 'SendRawEmail') {
        const action = call.raw || call.operation === 'SendRawEmail' ? 'ses:SendRawEmail' : 'ses:SendEmail';
        return [
          { action, resource: identity },
          { action, resource: setOf(call.configurationSetName) },
        ];
      }
      // A set's own calls are authorised against the set; a create with tags needs TagResource too.
      if (call.operation.includes('ConfigurationSet')) {
        const set = setOf(call.configurationSetName);
        return [
          { action: `ses:${call.operation}`, resource: set },
          ...(call.operation === 'CreateConfigurationSet' && call.tagged
            ? [{ action: 'ses:TagResource', resource: set }]
            : []),
        ];
      }
      const required: Requirement[] = [{ action: `ses:${call.operation}`, resource: identity }];
      if (call.operation === 'CreateEmailIdentity' && call.tagged)
        required.push({ action: 'ses:TagResource', resource: identity });
      return required;
    }
    case 'S3': {
      const bucketId = call.bucket ? ids.bucketIdByName?.(call.bucket) : undefined;
      if (bucketId && (call.operation === 'ListObjectsV2' || call.operation === 'ListObjects'))
        return [
          {
            action: 's3:ListBucket',
            resource: { kind: 'bucket-prefix', bucketId, prefix: call.prefix ?? '' },
          },
        ];
      if (!bucketId || call.key === undefined)
        throw new Error(`S3 call to an unknown object: ${JSON.stringify(call)}`);
      return [
        {
          action: `s3:${S3_ACTIONS[call.operation] ?? call.operation}`,
          resource: { kind: 'object', bucketId, key: call.key },
        },
      ];
    }
    default:
      throw new Error(`no IAM mapping for ${call.service}:${call.operation}`);
  }
}

const matchesAction = (pattern: string, action: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function matchesResource(entry: unknown, ref: ResourceRef): boolean {
  const text = JSON.stringify(entry);
  switch (ref.kind) {
    case 'table':
      return same(entry, { 'Fn::GetAtt': [ref.tableId, 'Arn'] });
    case 'index':
      return (
        text.includes(JSON.stringify({ 'Fn::GetAtt': [ref.tableId, 'Arn'] })) &&
        (text.includes(`/index/${ref.indexName}"`) || text.includes('/index/*"'))
      );
    case 'queue':
      return same(entry, { 'Fn::GetAtt': [ref.queueId, 'Arn'] });
    case 'ses-identity':
      return /:identity\/\*"/.test(text);
    case 'any':
      return entry === '*';
    case 'secret':
      return same(entry, { Ref: ref.secretId });
    case 'ses-configuration-set':
      return text.includes(':configuration-set/') && text.includes(`"Ref":"${ref.configurationSetId}"`);
    case 'ses-domain-configuration-set':
      return text.includes(`:configuration-set/${ref.prefix}dom_*"`);
    case 'bucket':
    case 'bucket-prefix':
      return same(entry, { 'Fn::GetAtt': [ref.bucketId, 'Arn'] }) || entry === '*';
    case 'object': {
      // { "Fn::Join": ["", [{ "Fn::GetAtt": [bucket, "Arn"] }, "/<prefix>*"]] }
      const join = (entry as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
      if (join?.[0] !== '' || join[1].length !== 2) return false;
      const [arn, pattern] = join[1];
      return (
        same(arn, { 'Fn::GetAtt': [ref.bucketId, 'Arn'] }) &&
        typeof pattern === 'string' &&
        pattern.endsWith('*') &&
        !pattern.slice(0, -1).includes('*') &&
        `/${ref.key}`.startsWith(pattern.slice(0, -1))
      );
    }
  }
}

/** A transaction's item operations, and the actions IAM checks them as. */
const TRANSACT_ITEM_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/**
 * The IAM actions any of which an SDK operation may need: one, but a DynamoDB transaction needs its
 * items' (which only its input says: a role that grants none of them can make none).
 */
export function iamActionsOf(service: string, operation: string): string[] {
  if (service === 'DynamoDB' && operation === 'TransactWriteItems')
    return ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'];
  if (service === 'DynamoDB' && operation === 'TransactGetItems') return ['dynamodb:GetItem'];
  return [iamActionOf(service, operation)];
}

/** The IAM action of an SDK operation (`SESv2`, `GetEmailIdentity` → `ses:GetEmailIdentity`). */
export function iamActionOf(service: string, operation: string): string {
  switch (service) {
    case 'DynamoDB':
      return `dynamodb:${operation}`;
    case 'SQS':
      return `sqs:${SQS_ACTIONS[operation] ?? operation}`;
    case 'SESv2':
    case 'SES':
      return `ses:${operation}`;
    case 'S3':
      return `s3:${S3_ACTIONS[operation] ?? operation}`;
    default:
      throw new Error(`no IAM mapping for ${service}:${operation}`);
  }
}

/** Whether an Allow statement of the role grants the action on some resource. */
export const grantsAction = (statements: Statement[], action: string): boolean =>
  statements.some(
    (statement) =>
      (statement.Effect ?? 'Allow') === 'Allow' &&
      [statement.Action].flat().some((pattern) => matchesAction(pattern, action)),
  );

/**
 * Whether a statement's condition holds for the request: none, or (the one the stack writes) an
 * `s3:prefix` StringLike that a listing's prefix matches. A request without a prefix (S3's own
 * look at ListBucket when a missing object is read) meets no conditioned statement.
 */
function conditionHolds(statement: Statement & { Condition?: unknown }, resource: ResourceRef): boolean {
  if (statement.Condition === undefined) return true;
  const keys = JSON.stringify(Object.keys(statement.Condition as object));
  const patterns = (statement.Condition as { StringLike?: Record<string, string | string[]> }).StringLike?.[
    's3:prefix'
  ];
  if (keys !== '["StringLike"]' || patterns === undefined || resource.kind !== 'bucket-prefix') return false;
  return [patterns].flat().some((pattern) => matchesAction(pattern, resource.prefix));
}

/** Whether an Allow statement of the role grants the action on the resource (no Deny is used). */
export const allows = (statements: Statement[], { action, resource }: Requirement): boolean =>
  statements.some(
    (statement) =>
      (statement.Effect ?? 'Allow') === 'Allow' &&
      [statement.Action].flat().some((pattern) => matchesAction(pattern, action)) &&
      [statement.Resource].flat().some((entry) => matchesResource(entry, resource)) &&
      conditionHolds(statement, resource),
  );

export const describeRequirement = ({ action, resource }: Requirement) =>
  `${action} on ${resource.kind}${'indexName' in resource ? ` ${resource.indexName}` : ''}${'queueId' in resource ? ` ${resource.queueId}` : ''}${'key' in resource ? ` ${resource.key}` : ''}${'prefix' in resource ? ` ${resource.prefix}` : ''}`;
