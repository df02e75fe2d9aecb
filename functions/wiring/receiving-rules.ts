import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoReceiptRuleViewStore } from '../adapters/dynamodb/receipt-rule-view.js';
import { domainRepository, openTable } from '../adapters/dynamodb/repositories.js';
import { SesReceiptRuleSets, SesReceiptRules } from '../adapters/ses/receipt-rules.js';
import { newSesV1Client } from '../adapters/ses/v1-client.js';
import { SqsReceiptRuleSync } from '../adapters/sqs/receipt-rule-sync.js';
import { log } from '../observability/logger.js';
import { counters } from '../observability/metrics.js';
import { RuleCallPacer } from '../receiving/rules.js';
import type { SetUpDeps } from '../receiving/set-up.js';
import type { SyncRulesDeps } from '../receiving/sync-rules.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/ports.js';

/**
 * The wiring of the functions that call SES's receipt-rule API (v1): apart from functions/wiring.ts
 * so that only they load @aws-sdk/client-ses. Both keep to SES's one receipt-rule call a second
 * (receiving/rules.ts RuleCallPacer, run before each call the adapter makes).
 */

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const pacer = (intervalMs: number) => {
  const paced = new RuleCallPacer(systemClock, sleep, intervalMs);
  return () => paced.turn();
};

/** The receipt-rule writer: the domains, our rules in their set, and where it keeps its view. */
export function syncReceiptRulesDeps(): SyncRulesDeps {
  const config = loadConfig(
    'TABLE_NAME',
    'RECEIPT_RULE_SET',
    'RECEIPT_RULE_PREFIX',
    'RECEIVE_FUNCTION_ARN',
    'CONTENT_BUCKET',
    'RECEIPT_RULE_CALL_INTERVAL_MS',
  );
  const table = openTable(config.TABLE_NAME);
  return {
    domains: domainRepository(table),
    rules: new SesReceiptRules(newSesV1Client(), {
      ruleSet: config.RECEIPT_RULE_SET,
      prefix: config.RECEIPT_RULE_PREFIX,
      bucket: config.CONTENT_BUCKET,
      functionArn: config.RECEIVE_FUNCTION_ARN,
      pace: pacer(config.RECEIPT_RULE_CALL_INTERVAL_MS),
    }),
    views: new DynamoReceiptRuleViewStore(table.db, table.name),
    ruleSet: config.RECEIPT_RULE_SET,
    prefix: config.RECEIPT_RULE_PREFIX,
    clock: systemClock,
    log,
    counters,
  };
}

/** What the custom resource's event gives it (ResourceProperties; lib/constructs/receiving.ts sets them). */
export interface ReceivingProperties {
  /** Our own set's name, used when no set is active. */
  RuleSetName: string;
  RulePrefix: string;
  BucketName: string;
  /** receive-email's ARN. */
  FunctionArn: string;
  /** The receipt-rule writer's FIFO queue. */
  SyncQueueUrl: string;
}

/** The custom resource: SES's rule sets and our rules, built per event from its properties. */
export function setUpReceivingDeps(): (properties: ReceivingProperties) => SetUpDeps {
  const ses = newSesV1Client();
  const sqs = newSqsClient();
  const { RECEIPT_RULE_CALL_INTERVAL_MS } = loadConfig('RECEIPT_RULE_CALL_INTERVAL_MS');
  return (properties) => {
    // One pace for every call of this event, whichever set it is made on.
    const pace = pacer(RECEIPT_RULE_CALL_INTERVAL_MS);
    return {
      sets: new SesReceiptRuleSets(ses, pace),
      rulesIn: (ruleSet) =>
        new SesReceiptRules(ses, {
          ruleSet,
          prefix: properties.RulePrefix,
          bucket: properties.BucketName,
          functionArn: properties.FunctionArn,
          pace,
          // A rule written right after the stack made the bucket policy and the function's
          // permission: SES may not see them yet, so its refusals are tried again for about a minute.
          settle: { sleep },
        }),
      sync: new SqsReceiptRuleSync(sqs, properties.SyncQueueUrl),
      log,
    };
  };
}
