import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { invoke } from './invocation.js';
import { lambdaContext } from './lambda-context.js';

/** The scheduled functions' timers: EventBridge's rules, here. */

export type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

/** What EventBridge hands a function its schedule invokes. */
export const scheduledEvent = (functionName: string): ScheduledEvent => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [`arn:aws:events:us-east-1:000000000000:rule/${functionName}`],
  detail: {},
});

/** Runs a scheduled function every `intervalMs`, one run at a time (EventBridge's rule on AWS). */
export function startSchedule(
  functionName: string,
  handler: ScheduledHandler,
  intervalMs: number,
  log?: (message: string, fields?: Record<string, unknown>) => void,
) {
  let running: Promise<unknown> | undefined;
  const run = () => handler(scheduledEvent(functionName), lambdaContext(functionName, 60_000));
  const start = () =>
    (running ??= invoke(functionName, run)
      .catch((error) => log?.('scheduled run failed', { functionName, error: String(error) }))
      .finally(() => {
        running = undefined;
      }));
  const timer = setInterval(start, intervalMs);
  return {
    async runNow() {
      await running;
      return start();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
