import { createServer } from 'node:net';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { FUNCTIONS } from '../functions/catalog.js';
import {
  AUDIENCE_QUEUES,
  type AudienceQueueSettings,
  BROADCAST_FANOUT_QUEUE,
  visibilitySecondsOf,
} from '../functions/shared/audience-queues.js';
import { ensureQueueWithDlq, type LocalQueue } from './resources.js';

/** The audience queues locally, as the stack makes them (lib/constructs/audience-work.ts). */
export interface AudienceQueues {
  /** Their URLs, by the part they play (LocalService.queues). */
  urls: {
    contactImports: string;
    contactImportDeadLetters: string;
    audienceCleanup: string;
    audienceCleanupDeadLetters: string;
    /** The broadcasts' fan-out queue (issue 41; lib/constructs/broadcast-work.ts). */
    broadcastFanOut: string;
    broadcastFanOutDeadLetters: string;
  };
  /** The variables the functions that use them read. */
  settings: {
    CONTACT_IMPORT_QUEUE_URL: string;
    AUDIENCE_CLEANUP_QUEUE_URL: string;
    BROADCAST_FANOUT_QUEUE_URL: string;
  };
  /** Each queue with the worker that consumes it, for the pollers (consumers.ts). */
  consumed: AudienceConsumer[];
}

/** A queue, and how its worker consumes it (AUDIENCE_QUEUES). */
export interface AudienceConsumer {
  queue: LocalQueue;
  settings: AudienceQueueSettings;
}

export async function ensureAudienceQueues(sqs: SQSClient): Promise<AudienceQueues> {
  const made = async (name: string, settings: AudienceQueueSettings) =>
    ensureQueueWithDlq(sqs, name, {
      maxReceiveCount: settings.maxReceiveCount,
      visibilityTimeoutSeconds: visibilitySecondsOf(settings),
    });
  const imports = await made('email-service-contact-imports', AUDIENCE_QUEUES.contactImports);
  const cleanup = await made('email-service-audience-cleanup', AUDIENCE_QUEUES.audienceCleanup);
  const fanOut = await made('email-service-broadcast-fanout', BROADCAST_FANOUT_QUEUE);
  return {
    urls: {
      contactImports: imports.queue.url,
      contactImportDeadLetters: imports.dlq.url,
      audienceCleanup: cleanup.queue.url,
      audienceCleanupDeadLetters: cleanup.dlq.url,
      broadcastFanOut: fanOut.queue.url,
      broadcastFanOutDeadLetters: fanOut.dlq.url,
    },
    settings: {
      CONTACT_IMPORT_QUEUE_URL: imports.queue.url,
      AUDIENCE_CLEANUP_QUEUE_URL: cleanup.queue.url,
      BROADCAST_FANOUT_QUEUE_URL: fanOut.queue.url,
    },
    consumed: [
      { queue: imports.queue, settings: AUDIENCE_QUEUES.contactImports as AudienceQueueSettings },
      { queue: cleanup.queue, settings: AUDIENCE_QUEUES.audienceCleanup as AudienceQueueSettings },
      { queue: fanOut.queue, settings: BROADCAST_FANOUT_QUEUE as AudienceQueueSettings },
    ].filter(({ settings }) => settings.worker in FUNCTIONS),
  };
}

/**
 * The port the HTTPS gateway will listen on, known before any function is loaded, so PUBLIC_ORIGIN
 * (where unsubscribe links point: `https://localhost:<port>`) is set in every function's
 * environment: the port asked for, or for 0 one the system has free now.
 */
export async function gatewayPort(asked: number): Promise<number> {
  if (asked !== 0) return asked;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
