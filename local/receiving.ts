import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { S3ContentStore } from '../functions/adapters/s3/content-store.js';
import { type InboundSmtp, type LocalReceiptEvent, startInboundSmtp } from './inbound-smtp.js';
import { invoke } from './invocation.js';
import { lambdaContext } from './lambda-context.js';
import type { LocalQueue } from './resources.js';

/**
 * Receiving, locally, as the stack sets it up on AWS: the receipt rules' queue (FIFO, one writer at
 * a time) and receive-email's failure destination, the custom resource run at each start as
 * CloudFormation runs it at each deploy (Create the first time, Update after), a rule sync queued
 * so the rules come from the same writer as on AWS, and SES's inbound SMTP endpoint
 * (inbound-smtp.ts) handing each message to receive-email as an asynchronous invocation.
 */

const ACCOUNT = '000000000000';
export const RULE_PREFIX = 'email-service';
export const RULE_SET = `${RULE_PREFIX}-receiving`;
export const functionArn = (region: string, name: string) =>
  `arn:aws:lambda:${region}:${ACCOUNT}:function:${name}`;

type Log = (message: string, fields?: Record<string, unknown>) => void;
type Handler<E> = (event: E, context: Context) => Promise<unknown>;

async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<LocalQueue> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`no url for queue ${name}`);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}` };
}

/**
 * The receipt rules' FIFO queue (with its dead-letter queue) and receive-email's failure destination
 * (a standard queue: Lambda sends no records to a FIFO one), and the settings that name them.
 */
export async function ensureReceivingQueues(sqs: SQSClient, region: string) {
  const rulesDlq = await ensureQueue(sqs, 'email-service-receipt-rules-dlq.fifo', { FifoQueue: 'true' });
  const receiptRules = await ensureQueue(sqs, 'email-service-receipt-rules.fifo', {
    FifoQueue: 'true',
    VisibilityTimeout: '60',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: rulesDlq.arn, maxReceiveCount: 5 }),
  });
  const failures = await ensureQueue(sqs, 'email-service-received-failures', {});
  return {
    receiptRules,
    failures,
    /** The local service's names for them (LocalService.queues). */
    urls: {
      receiptRules: receiptRules.url,
      receiptRulesDeadLetters: rulesDlq.url,
      receivedFailures: failures.url,
    },
    settings: {
      RECEIPT_RULES_QUEUE_URL: receiptRules.url,
      RECEIPT_RULE_SET: RULE_SET,
      RECEIPT_RULE_PREFIX: RULE_PREFIX,
      RECEIVE_FUNCTION_ARN: functionArn(region, 'receive-email'),
      RECEIVED_FAILURES_QUEUE_URL: failures.url,
      RECEIVED_RETENTION_DAYS: process.env.RECEIVED_RETENTION_DAYS ?? '30',
      // SES takes one receipt-rule call a second, and the functions keep to it by default; the
      // local SES has no such limit, so its calls are paced at 50 ms, or every start would wait
      // about 4 s while the custom resource makes the rule set (a laptop's timings, as the others).
      RECEIPT_RULE_CALL_INTERVAL_MS: process.env.RECEIPT_RULE_CALL_INTERVAL_MS ?? '50',
    },
  };
}

/** What CloudFormation keeps of the custom resource between deploys (here, between starts). */
export interface ResourceRecord {
  PhysicalResourceId: string;
  ResourceProperties: { ServiceToken: string } & Record<string, unknown>;
}

/**
 * Runs the custom resource's handler as CloudFormation does: Create the first time (no record in
 * `file`, none `previous`), Update with the physical id it answered after that (Delete, when the
 * stack is deleted: `deleting`), and waits for its answer at the ResponseURL (a PUT, as cfn-response
 * makes). A FAILED answer stops the start, as it fails a deploy.
 */
export async function runCustomResource(options: {
  handler: Handler<CloudFormationCustomResourceEvent>;
  properties: Record<string, unknown>;
  region: string;
  file?: string;
  /** The record of the last run, when it is kept in memory rather than in `file`. */
  previous?: ResourceRecord;
  /** The stack is deleted: Delete, with the physical id of the last run (which there must be). */
  deleting?: boolean;
  timeoutMs?: number;
}): Promise<{ PhysicalResourceId: string; Data?: Record<string, unknown>; record: ResourceRecord }> {
  const functionName = 'set-up-receiving';
  let answer: (body: Record<string, unknown>) => void = () => undefined;
  const answered = new Promise<Record<string, unknown>>((resolve) => {
    answer = resolve;
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200).end();
      try {
        answer(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        answer({ Status: 'FAILED', Reason: 'the answer at the ResponseURL was not JSON' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    let previous = options.previous;
    try {
      previous ??= options.file
        ? (JSON.parse(readFileSync(options.file, 'utf8')) as ResourceRecord)
        : undefined;
    } catch {}
    if (options.deleting && !previous)
      throw new Error(`${functionName} was never created: nothing to delete`);
    const serviceToken = functionArn(options.region, functionName);
    const common = {
      ServiceToken: serviceToken,
      ResponseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cloudformation-response`,
      StackId: `arn:aws:cloudformation:${options.region}:${ACCOUNT}:stack/email-service/local`,
      RequestId: randomUUID(),
      LogicalResourceId: 'Receiving',
      ResourceType: 'Custom::Receiving',
      ResourceProperties: { ServiceToken: serviceToken, ...options.properties },
    };
    const event: CloudFormationCustomResourceEvent =
      options.deleting && previous
        ? {
            ...common,
            RequestType: 'Delete',
            PhysicalResourceId: previous.PhysicalResourceId,
            ResourceProperties: previous.ResourceProperties,
          }
        : previous
          ? {
              ...common,
              RequestType: 'Update',
              PhysicalResourceId: previous.PhysicalResourceId,
              OldResourceProperties: previous.ResourceProperties,
            }
          : { ...common, RequestType: 'Create' };
    // The stack gives set-up-receiving 5 minutes (lib/constructs/receiving.ts): an Update rewrites
    // the rules it has time for and hands the rest to the writer, by the same clock here.
    const timeoutMs = options.timeoutMs ?? 300_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${functionName} gave CloudFormation no answer within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        invoke(functionName, () => options.handler(event, lambdaContext(functionName, timeoutMs))),
        timedOut,
      ]);
      const response = await Promise.race([answered, timedOut]);
      if (response.Status !== 'SUCCESS')
        throw new Error(
          `${functionName} answered CloudFormation ${String(response.Status)}: ${response.Reason}`,
        );
      const record: ResourceRecord = {
        PhysicalResourceId: String(response.PhysicalResourceId),
        ResourceProperties: common.ResourceProperties,
      };
      if (options.file && options.deleting) rmSync(options.file, { force: true });
      else if (options.file) {
        mkdirSync(dirname(options.file), { recursive: true });
        writeFileSync(options.file, JSON.stringify(record));
      }
      return {
        record,
        PhysicalResourceId: record.PhysicalResourceId,
        ...(response.Data ? { Data: response.Data as Record<string, unknown> } : {}),
      };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    server.close();
  }
}

/** Asks the rules' writer to bring the rules to the domains (one message group: one writer at a time). */
export const queueRuleSync = (sqs: SQSClient, queueUrl: string) =>
  sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify({ reason: 'start' }),
      MessageGroupId: 'rules',
      MessageDeduplicationId: randomUUID(),
    }),
  );

/**
 * Lambda's asynchronous invocation, as it runs SES's Lambda action with InvocationType `Event`: a
 * function error is retried twice (after a minute, then two, on AWS; `retryDelaysMs` here), and an
 * event that fails every attempt goes to the failure destination as Lambda's invocation record
 * (`condition: 'RetriesExhausted'`, the event as `requestPayload`), which the sweep reads.
 */
export function asyncInvoker<E>(options: {
  functionName: string;
  functionArn: string;
  handler: Handler<E>;
  timeoutMs: number;
  retryDelaysMs: number[];
  onFailure(record: Record<string, unknown>): Promise<unknown>;
  log?: Log;
}): (event: E) => Promise<void> {
  return async (event) => {
    let attempts = 0;
    let failure: Error | undefined;
    for (const delay of [0, ...options.retryDelaysMs]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      attempts++;
      try {
        await invoke(options.functionName, () =>
          options.handler(event, lambdaContext(options.functionName, options.timeoutMs)),
        );
        return;
      } catch (error) {
        failure = error as Error;
        options.log?.('an asynchronous invocation failed', {
          functionName: options.functionName,
          attempt: attempts,
          error: String(error),
        });
      }
    }
    await options.onFailure({
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: {
        requestId: randomUUID(),
        functionArn: `${options.functionArn}:$LATEST`,
        condition: 'RetriesExhausted',
        approximateInvokeCount: attempts,
      },
      requestPayload: event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: {
        errorType: failure?.name ?? 'Error',
        errorMessage: failure?.message ?? String(failure),
        trace: (failure?.stack ?? '').split('\n'),
      },
    });
  };
}

/** Receiving, locally: the inbound SMTP endpoint, and CloudFormation's later events for the custom resource. */
export interface LocalReceiving extends InboundSmtp {
  /**
   * Runs the custom resource again as CloudFormation does at a deploy (Update: recipients kept,
   * each rule written again, a sync asked for) or at the stack's deletion (Delete: our rules, and
   * our set if we made it, removed).
   */
  customResource(requestType: 'Update' | 'Delete'): Promise<void>;
}

/**
 * Receiving at a start, after the functions' settings are in the environment: the custom resource,
 * a rule sync, and the inbound SMTP endpoint.
 */
export async function startLocalReceiving(options: {
  region: string;
  sqs: SQSClient;
  queues: Awaited<ReturnType<typeof ensureReceivingQueues>>;
  s3Endpoint: string;
  bucket: string;
  port: number;
  portRequired?: boolean;
  /** The local SES's receipt rules: whether its active rule set takes mail for an address. */
  acceptsRecipient(address: string): Promise<boolean>;
  load<T>(name: string): Promise<T>;
  /** Where the custom resource's physical id is kept between starts (none: Create at every start). */
  resourceFile?: string;
  /** Lambda's retries of a failed asynchronous invocation, scaled to a laptop. @default [1000, 2000] */
  retryDelaysMs?: number[];
  log?: Log;
}): Promise<LocalReceiving> {
  const { region, sqs, queues } = options;
  const setUpHandler = await options.load<Handler<CloudFormationCustomResourceEvent>>('set-up-receiving');
  // What the stack's custom resource is given (lib/constructs/receiving.ts).
  const properties = {
    RuleSetName: RULE_SET,
    RulePrefix: RULE_PREFIX,
    BucketName: options.bucket,
    FunctionArn: queues.settings.RECEIVE_FUNCTION_ARN,
    SyncQueueUrl: queues.receiptRules.url,
  };
  let { record } = await runCustomResource({
    handler: setUpHandler,
    properties,
    region,
    file: options.resourceFile,
  });
  await queueRuleSync(sqs, queues.receiptRules.url);
  const s3 = new S3Client({
    endpoint: options.s3Endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    forcePathStyle: true,
  });
  const content = new S3ContentStore(s3, options.bucket);
  const receiveArn = queues.settings.RECEIVE_FUNCTION_ARN;
  const smtp = await startInboundSmtp({
    port: options.port,
    portRequired: options.portRequired,
    region,
    functionArn: receiveArn,
    acceptsRecipient: options.acceptsRecipient,
    storeRaw: (key, bytes) => content.put(key, bytes, 'application/octet-stream'),
    invoke: asyncInvoker<LocalReceiptEvent>({
      functionName: 'receive-email',
      functionArn: receiveArn,
      handler: await options.load<Handler<LocalReceiptEvent>>('receive-email'),
      timeoutMs: 60_000,
      retryDelaysMs: options.retryDelaysMs ?? [1_000, 2_000],
      onFailure: (record) =>
        sqs.send(
          new SendMessageCommand({ QueueUrl: queues.failures.url, MessageBody: JSON.stringify(record) }),
        ),
      log: options.log,
    }),
    log: options.log,
  });
  return {
    ...smtp,
    idle: () => smtp.idle(),
    stop: () => smtp.stop(),
    async customResource(requestType) {
      ({ record } = await runCustomResource({
        handler: setUpHandler,
        properties,
        region,
        file: options.resourceFile,
        previous: record,
        deleting: requestType === 'Delete',
      }));
    },
  };
}
