import type { Config } from './config.js';

/**
 * What a function of the service may do on AWS, and the settings it reads: its entry in the
 * catalog (functions/catalog.ts), from which the stack grants its role exactly these and sets these
 * variables. Declared beside the code that needs it: a route's in its concept's routes.ts, a worker's
 * in its concept's workers.ts. Tests hold each function's synthesized role to the calls its code
 * makes, and its variables to what its wiring reads.
 */
export type EnvKey = keyof Config;
export type DynamoAction =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'BatchGetItem'
  | 'BatchWriteItem';
/** The table's indexes, by what they serve (adapters/dynamodb/table.ts INDEXES names each). */
export type IndexKey = 'emailsByTime' | 'emailsByStatus' | 'emailsByDue' | 'emailsBySearch';
export type SqsAction = 'SendMessage' | 'ReceiveMessage' | 'DeleteMessage' | 'GetQueueAttributes';
export type ContentAction = 's3:PutObject' | 's3:GetObject' | 's3:AbortMultipartUpload';
/**
 * The content bucket's prefixes: sent mail's (functions/emails/attachments.ts names the keys under
 * them) and received mail's (functions/receiving/model.ts), each under its own lifecycle rule.
 */
export type ContentPrefix = 'attachments/' | 'bodies/' | 'received/' | 'imports/';
export type SesIdentityAction =
  | 'CreateEmailIdentity'
  | 'TagResource'
  | 'GetEmailIdentity'
  | 'PutEmailIdentityMailFromAttributes'
  | 'DeleteEmailIdentity';
export type SesConfigurationSetAction =
  | 'CreateConfigurationSet'
  | 'TagResource'
  | 'PutConfigurationSetDeliveryOptions'
  | 'PutConfigurationSetTrackingOptions'
  | 'CreateConfigurationSetEventDestination'
  | 'UpdateConfigurationSetEventDestination'
  | 'DeleteConfigurationSet';
/**
 * SES v1's receipt-rule actions (receiving). IAM has no resource type for them (the Service
 * Authorization Reference, "Actions defined by Amazon SES", lists none), so they are granted on `*`.
 */
export type SesReceiptRuleAction =
  | 'DescribeActiveReceiptRuleSet'
  | 'DescribeReceiptRuleSet'
  | 'CreateReceiptRuleSet'
  | 'SetActiveReceiptRuleSet'
  | 'DeleteReceiptRuleSet'
  | 'CreateReceiptRule'
  | 'UpdateReceiptRule'
  | 'DeleteReceiptRule';

/** What a function may call beyond the table, and the settings it reads. */
export interface FunctionAccess {
  /** Environment variables its wiring reads (all of them set by the stack, none left to a default). */
  readonly env?: readonly EnvKey[];
  /** Variables it also reads, set only where a setting turns a feature on (absent: off). */
  readonly optionalEnv?: readonly EnvKey[];
  /** Actions on the send queue and on its dead-letter queue. */
  readonly sendQueue?: readonly SqsAction[];
  readonly sendDeadLetters?: readonly SqsAction[];
  /** Hands emails to SES (ses:SendEmail, with this stack's configuration set). */
  readonly sendsEmail?: true;
  /**
   * Also hands SMTP emails to SES as their MIME, raw content, which IAM authorises as
   * ses:SendRawEmail (on sendsEmail's identities and sets; issue 42).
   */
  readonly sendsRawEmail?: true;
  /** SES identity actions (sending domains). */
  readonly identities?: readonly SesIdentityAction[];
  /** SES actions on domains' own configuration sets (named by the stack's prefix). */
  readonly configurationSets?: readonly SesConfigurationSetAction[];
  /** Takes addresses off SES's account-level suppression list (ses:DeleteSuppressedDestination). */
  readonly sesSuppressions?: true;
  /** Reads the account's sending limits (ses:GetAccount). */
  readonly sesAccount?: true;
  /** SES receipt-rule actions (receiving's rules and rule sets). */
  readonly receiptRules?: readonly SesReceiptRuleAction[];
  /** Actions on the receipt-rule writer's FIFO queue (asking it to bring the rules to the domains). */
  readonly receiptRulesQueue?: readonly SqsAction[];
  /** Actions on the webhook delivery queue (publishing events; the delivery function's retries). */
  readonly webhookQueue?: readonly SqsAction[];
  /** Actions on the contact imports' queue (CONTACT_IMPORT_QUEUE_URL). */
  readonly contactImportQueue?: readonly SqsAction[];
  /** Actions on the broadcasts' fan-out queue (BROADCAST_FANOUT_QUEUE_URL). */
  readonly broadcastFanOutQueue?: readonly SqsAction[];
  /** Actions on the broadcast lane, the broadcast emails' send queue (BROADCAST_SEND_QUEUE_URL). */
  readonly broadcastSendQueue?: readonly SqsAction[];
  /** Actions on the broadcast lane's dead-letter queue (BROADCAST_LANE_DEAD_LETTER_QUEUE_URL). */
  readonly broadcastLaneDeadLetters?: readonly SqsAction[];
  /** Actions on the audience clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL). */
  readonly audienceCleanupQueue?: readonly SqsAction[];
  /** Reads the unsubscribe links' signing keys (secretsmanager:GetSecretValue on UNSUBSCRIBE_KEYS_SECRET). */
  readonly unsubscribeKeys?: 'read' | 'rotate';
  /** Actions on the failure destination of receive-email's asynchronous invocations. */
  readonly receivedFailures?: readonly SqsAction[];
  /** s3:ListBucket on the content bucket, for keys under `received/raw/` only (the sweep's look for unparsed mail). */
  readonly listsReceivedRaw?: true;
  /**
   * Actions on the receipt-rule writer's FIFO queue (RECEIPT_RULES_QUEUE_URL), where the stack
   * receives: the functions that change a domain's receiving ask the writer to follow. Where the
   * stack does not receive there is no such queue, and nothing is granted.
   */
  readonly receiptRuleQueue?: readonly SqsAction[];
  /**
   * S3 actions on the content bucket, per key prefix (granted on `<prefix>*` only). There is no
   * s3:ListBucket among them (only the receiving sweep lists, `received/raw/` alone:
   * listsReceivedRaw), so on AWS a read of a missing object
   * answers 403 AccessDenied rather than 404 NoSuchKey; the local S3 answers the same (catalog.ts
   * missingObjectStatus), and the content store takes either as "missing".
   */
  readonly content?: { readonly [P in ContentPrefix]?: readonly ContentAction[] };
}

/** A background function (a queue's consumer, a scheduled job): all it reads and may call. */
export interface WorkerSpec extends FunctionAccess {
  /** What the function does, for the stack's descriptions. */
  readonly description: string;
  readonly env: readonly EnvKey[];
  /** DynamoDB actions on the table, and the indexes it queries (none: no index). */
  readonly table: { readonly actions: readonly DynamoAction[]; readonly indexes?: readonly IndexKey[] };
}

/**
 * What a route's function may do beyond what every API function does (find the caller's key and
 * count its request: catalog.ts adds those grants and settings): its settings, its table actions
 * and indexes, and what else it calls.
 */
export interface RouteAccess extends FunctionAccess {
  readonly actions?: readonly DynamoAction[];
  readonly indexes?: readonly IndexKey[];
}

/**
 * What a function that raises webhook events needs: the endpoints (one strongly consistent Query of
 * their partition per invocation that raises one) and the delivery queue (SendMessage, batched).
 */
export const PUBLISHES = { webhookQueue: ['SendMessage'] } as const satisfies FunctionAccess;
