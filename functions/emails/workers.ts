import { PUBLISHES, type WorkerSpec } from '../shared/function-spec.js';

/** The emails' background functions: the send consumer, the SES events consumer, the sweeper and the scheduler (shared/function-spec.ts). */

export const EMAIL_WORKERS = {
  'process-send-queue': {
    description: 'Hands queued emails to SES, at most once each, at the account’s SES pace',
    env: [
      'TABLE_NAME',
      'CONFIGURATION_SET_NAME',
      'SEND_MAX_RECEIVE_COUNT',
      'SES_CONNECT_TIMEOUT_MS',
      'SES_REQUEST_TIMEOUT_MS',
      'SEND_FETCH_TIMEOUT_MS',
      'SEND_CLAIM_MARGIN_MS',
      'SEND_THROTTLE_BACKOFF_MS',
      'SEND_THROTTLE_BACKOFF_MAX_MS',
      'SEND_BLOCKED_RETRY_MIN_MS',
      'SEND_BLOCKED_RETRY_MAX_MS',
      'SES_ACCOUNT_REFRESH_MS',
      'WEBHOOK_QUEUE_URL',
      'CONTENT_BUCKET',
      'SEND_QUEUE_URL',
      // An email with topic_id: each recipient's one-click unsubscribe link (deliver-gate.ts).
      'UNSUBSCRIBE_KEYS_SECRET',
      'PUBLIC_ORIGIN',
    ],
    optionalEnv: ['ATTACHMENT_ALLOW_LOOPBACK', 'SES_MAX_SEND_RATE', 'SENDER_OPTIONS_TTL_MS'],
    // The suppression list (BatchGetItem, once per email; also a large job's content); the attempt
    // record and its outcomes, suppressed recipients included, the shared send schedule, and the
    // claim and keeping of a read of the account's SES limits beside it (UpdateItem); why a claim
    // was refused, a scheduled email's state and its API key, how far the schedule is booked, the
    // kept SES limits (GetItem); the webhook endpoints (Query). An email with topic_id: its topic
    // (GetItem), its recipients' contacts and their choices for the topic (BatchGetItem).
    // PutItem: the event of a topic email's recipient SES never took (deliver-unsent.ts), kept as an
    // item of its own when too large for the status item. A broadcast's email: its tally (a
    // recipient put once by PutItem, its counters by UpdateItem; emails/tally.ts).
    table: { actions: ['BatchGetItem', 'GetItem', 'UpdateItem', 'Query', 'PutItem'] },
    // An email with topic_id: the key that signs each recipient's unsubscribe link, read at run time.
    unsubscribeKeys: 'read',
    // A scheduled email's message that came before its time goes back on the queue, delayed; so
    // does an email deferred for SES's limits (SendMessage, batched).
    sendQueue: ['SendMessage'],
    sendsEmail: true,
    // An SMTP email (issue 42): its MIME, read from bodies/, sent as raw content.
    sendsRawEmail: true,
    // The account's send rate, 24-hour quota and whether sending is paused (GetAccount), read by
    // the one instance whose claim won, for all of them.
    sesAccount: true,
    ...PUBLISHES,
    // Attachments and large bodies read; a file fetched from its `path` kept (in parts when large).
    content: {
      'attachments/': ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
      'bodies/': ['s3:GetObject'],
    },
  },
  'process-ses-events': {
    description: "Applies SES's events to the emails and the suppression list",
    env: ['TABLE_NAME', 'WEBHOOK_QUEUE_URL'],
    // Events and suppressions (PutItem); outcomes and statuses (UpdateItem); an email's recipients
    // and a suppression that stands (GetItem); whether the batch's sends are recorded already
    // (BatchGetItem); the webhook endpoints (Query). A broadcast's email: its tally (recipients by
    // PutItem, opens, clicks and counters by UpdateItem, first-click marks by PutItem).
    table: { actions: ['UpdateItem', 'PutItem', 'GetItem', 'BatchGetItem', 'Query'] },
    ...PUBLISHES,
  },
  // Its progress item (GetItem, PutItem), the queued emails' index entries (Query on the status
  // index), their status items and contents (BatchGetItem), its conditional transitions
  // (UpdateItem); the webhook endpoints (Query) for the email.failed of the emails it fails, and
  // the metrics' counters (UpdateItem) for them, and a broadcast's tally (UpdateItem: `ended`).
  'sweep-emails': {
    description:
      'Re-queues stranded emails, fails those whose send message reached the dead-letter queue, and settles those whose outcome will never come',
    env: [
      'TABLE_NAME',
      'SEND_QUEUE_URL',
      'SEND_DEAD_LETTER_QUEUE_URL',
      'BROADCAST_SEND_QUEUE_URL',
      'BROADCAST_LANE_DEAD_LETTER_QUEUE_URL',
      'SEND_MAX_RECEIVE_COUNT',
      'SWEEP_REQUEUE_AFTER_MS',
      'SWEEP_BACKLOG_GRACE_MS',
      'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
      'SWEEP_FINAL_EVENTS_AFTER_MS',
      'SWEEP_OLD_CHECK_EVERY_MS',
      'WEBHOOK_QUEUE_URL',
    ],
    table: {
      actions: ['GetItem', 'PutItem', 'Query', 'BatchGetItem', 'UpdateItem'],
      indexes: ['emailsByStatus'],
    },
    // Re-queues (and reads the backlog first); reads the dead-letter queue without deleting.
    sendQueue: ['SendMessage', 'GetQueueAttributes'],
    sendDeadLetters: ['ReceiveMessage'],
    // The same for broadcast emails, on their lane (emails/broadcast-lane.ts) and its dead-letter queue.
    broadcastSendQueue: ['SendMessage', 'GetQueueAttributes'],
    broadcastLaneDeadLetters: ['ReceiveMessage'],
    ...PUBLISHES,
  },
  // The due index (Query), the scheduler's cursors (Query, PutItem), scheduled emails' states and
  // contents (BatchGetItem) and their marks and transitions (UpdateItem); the webhook endpoints
  // (Query) and the metrics' counters (UpdateItem) for the emails it fails.
  'dispatch-scheduled': {
    description:
      'Queues scheduled emails as they fall due, and watches those due for a lost message or an unknown outcome',
    env: [
      'TABLE_NAME',
      'SEND_QUEUE_URL',
      'SWEEP_REQUEUE_AFTER_MS',
      'SWEEP_BACKLOG_GRACE_MS',
      'SWEEP_UNKNOWN_OUTCOME_AFTER_MS',
      'WEBHOOK_QUEUE_URL',
    ],
    table: {
      actions: ['PutItem', 'Query', 'BatchGetItem', 'UpdateItem'],
      indexes: ['emailsByDue'],
    },
    // Queues (delayed), and reads the backlog before re-queueing a stranded one.
    sendQueue: ['SendMessage', 'GetQueueAttributes'],
    ...PUBLISHES,
  },
} as const satisfies Record<string, WorkerSpec>;
