/**
 * The two queues of the audience's work off the request path, and how their functions consume
 * them: the same numbers on AWS (lib/constructs/audience-work.ts) and locally (local/audience.ts).
 * A worker keeps each run within `timeoutSeconds` (less a margin), then queues its next step.
 */
export interface AudienceQueueSettings {
  /** The function that consumes it (declared in its concept's workers.ts). */
  readonly worker: 'import-contacts' | 'clean-up-audience' | 'fan-out-broadcast';
  /** The worker's Lambda timeout: one step of an import, one page of a clean-up. */
  readonly timeoutSeconds: number;
  /** Receives of one message before it goes to the dead-letter queue (its step crashed that often). */
  readonly maxReceiveCount: number;
  /** Messages an invocation takes: one, so one step's crash retries that step alone. */
  readonly batchSize: number;
  /** Most invocations at once: how many imports (or clean-ups) advance side by side. */
  readonly maxConcurrency: number;
}

export const AUDIENCE_QUEUES = {
  /** One message per step of an import (contact-imports): read from a byte offset, write, checkpoint. */
  contactImports: {
    worker: 'import-contacts',
    timeoutSeconds: 300,
    maxReceiveCount: 5,
    batchSize: 1,
    maxConcurrency: 4,
  },
  /** One message per page of a deleted contact's, segment's or topic's memberships and choices. */
  audienceCleanup: {
    worker: 'clean-up-audience',
    timeoutSeconds: 120,
    maxReceiveCount: 5,
    batchSize: 1,
    maxConcurrency: 2,
  },
} as const satisfies Record<string, AudienceQueueSettings>;

/**
 * The broadcasts' fan-out queue (issue 41): one message per step of a broadcast (`{broadcast_id,
 * generation}`: a page of its segment, or a wait for its time, its quota or its lane), on AWS
 * (lib/constructs/broadcast-work.ts) and locally (local/audience.ts) alike. One at a time per
 * invocation, so a step's crash retries that step alone; a few broadcasts advance side by side.
 */
export const BROADCAST_FANOUT_QUEUE = {
  worker: 'fan-out-broadcast',
  timeoutSeconds: 120,
  maxReceiveCount: 5,
  batchSize: 1,
  maxConcurrency: 2,
} as const satisfies AudienceQueueSettings;

/** AWS's advice for a Lambda event source: a visibility timeout of six times the function's timeout. */
export const visibilitySecondsOf = (queue: AudienceQueueSettings) => queue.timeoutSeconds * 6;
