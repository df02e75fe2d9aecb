import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { runFanOutStep } from '../broadcasts/fan-out.js';
import type { FanOutDeps } from '../broadcasts/fan-out-ports.js';
import { backgroundHandler } from '../observability/middleware.js';
import { fanOutDeps } from '../wiring/broadcast-fanout.js';

/**
 * A step stops taking pages with this much of its function's time left (120 s): a page of 500 takes
 * a few seconds, so its last page, its checkpoint and its next message fit easily.
 */
export const STOP_BEFORE_MS = 60_000;

/** A fan-out message as the API and the fan-out itself queue it. */
export function parseFanOutMessage(body: string): { broadcast_id: string; generation: number } | undefined {
  try {
    const parsed = JSON.parse(body) as { broadcast_id?: unknown; generation?: unknown };
    if (typeof parsed.broadcast_id !== 'string' || !Number.isInteger(parsed.generation)) return undefined;
    return { broadcast_id: parsed.broadcast_id, generation: parsed.generation as number };
  } catch {
    return undefined;
  }
}

/**
 * The fan-out queue's consumer (broadcasts/fan-out.ts): each message `{broadcast_id, generation}`
 * is one step of one broadcast, from its checkpoint. A step that fails (thrown) is reported as a
 * batch item failure, so SQS delivers it again and the broadcast goes on from its last checkpoint;
 * an unreadable message is logged and dropped (retrying cannot mend it).
 */
export const makeHandler =
  (deps: FanOutDeps) =>
  async (event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const failures: { itemIdentifier: string }[] = [];
    for (const record of event.Records) {
      const message = parseFanOutMessage(record.body);
      if (!message) {
        deps.log?.error('unreadable fan-out message dropped', { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await runFanOutStep(deps, message, {
          timeUp: context ? () => context.getRemainingTimeInMillis() < STOP_BEFORE_MS : undefined,
        });
        deps.log?.info('broadcast fan-out step', { broadcast_id: message.broadcast_id, outcome });
      } catch (error) {
        deps.log?.error('broadcast fan-out step failed', { broadcast_id: message.broadcast_id, error });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };

export const handler = backgroundHandler(() => makeHandler(fanOutDeps()));
