import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { log } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { ownRuleSetName } from '../receiving/rules.js';
import {
  createReceiving,
  deleteReceiving,
  physicalIdOf,
  type SetUpDeps,
  setUpOf,
  updateReceiving,
} from '../receiving/set-up.js';
import { type ReceivingProperties, setUpReceivingDeps } from '../wiring/receiving-rules.js';

/**
 * The stack's receiving custom resource (receiving/set-up.ts does the work): Create sets our first
 * receipt rule up, Update leaves recipients alone and asks the writer for a sync, Delete removes
 * what Create added. CloudFormation waits for the answer PUT to the event's ResponseURL (as its
 * cfn-response module sends it: a JSON body, no content type), so every outcome, failures too, is
 * answered; only an answer that cannot be sent is thrown (Lambda then retries the invocation).
 * `Data.RuleSet` is the set our rules are in: the writer's RECEIPT_RULE_SET.
 */
const put = async (url: string, body: string) => {
  const answer = await fetch(url, {
    method: 'PUT',
    body,
    headers: { 'content-type': '' },
  });
  if (!answer.ok) throw new Error(`CloudFormation's response URL answered ${answer.status}`);
};

/**
 * `build`: the work's dependencies from the event's properties; `respond`: PUTs the answer (fetch
 * on Lambda).
 */
export const makeHandler =
  (
    build: (properties: ReceivingProperties) => SetUpDeps,
    respond: (url: string, body: string) => Promise<void> = put,
  ) =>
  async (event: CloudFormationCustomResourceEvent, context?: Context) => {
    const properties = event.ResourceProperties as unknown as ReceivingProperties;
    const ownSet = properties.RuleSetName || ownRuleSetName(properties.RulePrefix);
    const given = event.RequestType === 'Create' ? undefined : event.PhysicalResourceId;
    let answer: { Status: 'SUCCESS' | 'FAILED'; Reason?: string; PhysicalResourceId: string; Data?: object };
    try {
      const setUpDeps = build(properties);
      const props = { prefix: properties.RulePrefix, ownSet };
      let setUp = setUpOf(given);
      if (event.RequestType === 'Delete') await deleteReceiving(setUpDeps, setUp);
      else if (event.RequestType === 'Update' && setUp)
        await updateReceiving(
          setUpDeps,
          setUp,
          () => context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
        );
      else setUp = await createReceiving(setUpDeps, props);
      answer = {
        Status: 'SUCCESS',
        PhysicalResourceId: setUp ? physicalIdOf(setUp) : (given ?? event.LogicalResourceId),
        ...(setUp ? { Data: { RuleSet: setUp.ruleSet, CreatedRuleSet: String(setUp.created) } } : {}),
      };
    } catch (error) {
      log.error('receiving set-up failed', { requestType: event.RequestType, error });
      answer = {
        Status: 'FAILED',
        Reason:
          `${error instanceof Error ? error.message : String(error)} (log stream ${context?.logStreamName ?? 'unknown'})`.slice(
            0,
            1_000,
          ),
        // A Create that failed leaves an id no Delete acts on.
        PhysicalResourceId: given ?? `${event.LogicalResourceId}-not-set-up`,
      };
    }
    const body = JSON.stringify({
      ...answer,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    });
    await respond(event.ResponseURL, body);
    return answer;
  };

export const handler = backgroundHandler(() => makeHandler(setUpReceivingDeps()));
