/**
 * The queue access fields of a function's declaration (functions/shared/function-spec.ts) that
 * ServiceFunction.bind grants alike: the queue among its resources, the variable naming its URL,
 * and how the synth names it when it was not given.
 */
export const QUEUE_ACCESS = {
  contactImportQueue: {
    resource: 'contactImportQueue',
    variable: 'CONTACT_IMPORT_QUEUE_URL',
    name: "the contact imports' queue",
  },
  audienceCleanupQueue: {
    resource: 'audienceCleanupQueue',
    variable: 'AUDIENCE_CLEANUP_QUEUE_URL',
    name: 'the audience clean-up queue',
  },
  broadcastFanOutQueue: {
    resource: 'broadcastFanOutQueue',
    variable: 'BROADCAST_FANOUT_QUEUE_URL',
    name: "the broadcasts' fan-out queue",
  },
  broadcastSendQueue: {
    resource: 'broadcastSendQueue',
    variable: 'BROADCAST_SEND_QUEUE_URL',
    name: 'the broadcast lane',
  },
  broadcastLaneDeadLetters: {
    resource: 'broadcastLaneDeadLetterQueue',
    variable: 'BROADCAST_LANE_DEAD_LETTER_QUEUE_URL',
    name: "the broadcast lane's dead-letter queue",
  },
} as const;
