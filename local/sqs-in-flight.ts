/**
 * SQS's in-flight limit, which fauxqs does not have: a standard queue holds at most 120,000
 * messages received and neither deleted nor visible again (in flight). Past it, SQS answers a
 * short poll (WaitTimeSeconds 0) with an `OverLimit` error and a long poll with no messages; so
 * does the local SQS, at LOCAL_SQS_MAX_IN_FLIGHT (default 120,000) per queue. A receive below the
 * limit gets no more messages than the limit leaves. Delayed messages are not in flight.
 */

export const DEFAULT_MAX_IN_FLIGHT = 120_000;

/** LOCAL_SQS_MAX_IN_FLIGHT, or the default; anything but a whole number of at least 1 is refused. */
export function maxInFlightOf(env: Record<string, string | undefined> = process.env): number {
  const raw = env.LOCAL_SQS_MAX_IN_FLIGHT;
  if (raw === undefined || raw === '') return DEFAULT_MAX_IN_FLIGHT;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(
      `LOCAL_SQS_MAX_IN_FLIGHT must be a whole number of at least 1, not ${JSON.stringify(raw)}`,
    );
  return limit;
}

/** What of fauxqs's queue this reads (its own store, fauxqs/dist/sqs/sqsStore.js). */
interface FauxQueue {
  attributes: Record<string, string | undefined>;
  inflightMessages: Map<unknown, unknown>;
  /** Returns messages whose visibility ended to the queue. */
  processTimers(): void;
}

interface FauxApp {
  addHook(
    name: 'preHandler',
    hook: (
      request: { headers: Record<string, string | string[] | undefined>; body: unknown },
      reply: FauxReply,
    ) => Promise<unknown>,
  ): unknown;
}

interface FauxReply {
  code(status: number): FauxReply;
  header(name: string, value: string): FauxReply;
  send(payload: unknown): FauxReply;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Enforces `limit` on every queue of `store`, in front of fauxqs's ReceiveMessage. */
export function enforceInFlightLimit(
  app: FauxApp,
  store: { getQueue(url: string): FauxQueue | undefined },
  limit: number,
) {
  app.addHook('preHandler', async (request, reply) => {
    if (request.headers['x-amz-target'] !== 'AmazonSQS.ReceiveMessage') return;
    const body = request.body as {
      QueueUrl?: string;
      MaxNumberOfMessages?: number;
      WaitTimeSeconds?: number;
    };
    const queue = body?.QueueUrl ? store.getQueue(body.QueueUrl) : undefined;
    if (!queue) return;
    const inFlight = () => {
      queue.processTimers();
      return queue.inflightMessages.size;
    };
    const waitSeconds = body.WaitTimeSeconds ?? Number(queue.attributes.ReceiveMessageWaitTimeSeconds ?? 0);
    if (inFlight() >= limit) {
      const json = (status: number, payload: unknown) =>
        reply.code(status).header('content-type', 'application/x-amz-json-1.0').send(payload);
      if (!waitSeconds) {
        reply.header('x-amzn-query-error', 'OverLimit;Sender');
        return json(403, {
          __type: 'com.amazonaws.sqs#OverLimit',
          message: `The maximum number of in flight messages (${limit}) is reached`,
        });
      }
      // A long poll waits for a message to leave flight, and answers none if none does.
      const ends = Date.now() + waitSeconds * 1000;
      while (inFlight() >= limit && Date.now() < ends) await pause(50);
      if (inFlight() >= limit) return json(200, {});
      body.WaitTimeSeconds = Math.max(0, Math.floor((ends - Date.now()) / 1000));
    }
    body.MaxNumberOfMessages = Math.min(body.MaxNumberOfMessages ?? 1, limit - inFlight());
    return undefined;
  });
}
