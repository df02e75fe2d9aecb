import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { useClientPlugin } from '../functions/adapters/aws-clients.js';
import { currentFunction } from './invocation.js';

/**
 * Faults the local runtime can inject into its stand-ins for AWS, for `npm run chaos` (set as JSON
 * in LOCAL_FAULTS, or passed to startLocalService). Each number is a probability per request,
 * message or event. The handlers run unchanged: only what AWS would do differently is changed.
 */
const rate = z.optional(z.number().check(z.gte(0), z.lte(1)));

const faultsSchema = z.strictObject({
  ses: z.optional(
    z.strictObject({
      /** SendEmail answered 429 TooManyRequestsException before SES takes the email. */
      throttle: rate,
      /** SES takes the email, then answers 500 InternalFailure. */
      errorAfterAccept: rate,
      /** SES takes the email, then never answers (the client's request timeout ends the wait). */
      hangAfterAccept: rate,
      /**
       * The account's 24-hour quota is spent for this long (ms) after the start, then restored:
       * SendEmail answers LimitExceededException and GetAccount says so until then.
       */
      quotaSpentForMs: z.optional(z.number().check(z.int(), z.gte(0))),
    }),
  ),
  sesEvents: z.optional(
    z.strictObject({
      /** Each SES event is published twice. */
      duplicate: rate,
      /** Each SES event is published up to this much later than it would be (so events arrive late and out of order). */
      maxExtraDelayMs: z.optional(z.number().check(z.int(), z.gte(0))),
    }),
  ),
  sendQueue: z.optional(
    z.strictObject({
      /** A batch of the send queue is handed to the consumer twice at once (SQS's at-least-once). */
      duplicateDelivery: rate,
      /** send-email stores its email, then its queueing is lost (SendMessage answers success and keeps nothing); it answers 200. */
      loseEnqueue: rate,
    }),
  ),
  sendEmail: z.optional(
    z.strictObject({
      /** send-email stores its email, then dies before queueing it or answering: the client times out and retries. */
      crashAfterStore: rate,
    }),
  ),
  dynamodb: z.optional(
    z.strictObject({
      /** A request is answered ProvisionedThroughputExceededException (the SDK retries it, as on AWS). */
      throttle: rate,
    }),
  ),
});

export type LocalFaults = z.infer<typeof faultsSchema>;

export function parseFaults(text: string | undefined): LocalFaults {
  if (!text) return {};
  const result = faultsSchema.safeParse(JSON.parse(text));
  if (!result.success) throw new Error(`LOCAL_FAULTS is not valid: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** True with probability `p` (never when p is undefined or 0). */
export const chance = (p: number | undefined): boolean => p !== undefined && p > 0 && Math.random() < p;

/**
 * The faults that belong to a function rather than to AWS, injected as middleware on the SDK
 * clients the functions build, in send-email's invocations only (the sweeper's own re-queues are
 * not touched): `sendQueue.loseEnqueue` makes its SendMessage answer success without reaching the
 * queue; `sendEmail.crashAfterStore` makes it never return, as if the function died right after
 * storing the email, before queueing it or answering. Returns a function that removes them.
 */
export function injectClientFaults(faults: LocalFaults): () => void {
  const lose = faults.sendQueue?.loseEnqueue;
  const crash = faults.sendEmail?.crashAfterStore;
  if (!lose && !crash) return () => undefined;
  return useClientPlugin({
    applyToStack(stack) {
      stack.add(
        (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
          async (args: unknown) => {
            if (context.commandName === 'SendMessageCommand' && currentFunction() === 'send-email') {
              // The function is gone: nothing more happens in this invocation, and nothing is answered.
              if (chance(crash)) return new Promise(() => undefined);
              if (chance(lose)) return { output: { MessageId: randomUUID(), $metadata: {} }, response: {} };
            }
            return next(args);
          },
        { step: 'initialize', name: 'localFaultLoseEnqueue', priority: 'high' },
      );
    },
  });
}
