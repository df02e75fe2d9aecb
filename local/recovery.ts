import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type createDocumentClient, writeIf } from '../functions/adapters/dynamodb/client.js';
import { EmailKeys, parseLayout } from '../functions/adapters/dynamodb/email-keys.js';
import { DynamoSweepStore } from '../functions/adapters/dynamodb/sweep-store.js';
import { INDEXES, keys } from '../functions/adapters/dynamodb/table.js';
import { dispatchScheduled } from '../functions/emails/scheduler.js';
import { sweep } from '../functions/emails/sweep.js';
import { emailIdAt, FIRST_EMAIL_ID } from '../functions/shared/ids.js';
import { schedulerDeps, sweepDeps } from '../functions/wiring.js';
import { resumeBroadcasts } from './broadcast-recovery.js';
import { runAs } from './invocation.js';
import { TABLE_NAME } from './resources.js';
import type { LocalSes } from './ses-stand-in.js';

/**
 * Locally the queues live in memory, so a stop (or a kill) loses their messages; the table and the
 * SES ledger are on disk. At a start, before anything else runs:
 * 1. SES publishes again the events it owed for every email it took that is not final yet (its
 *    Send event marks an email sent whose worker died before recording it);
 * 2. the sweeper puts every queued, unsent email back on the (empty) queue at once. Those whose
 *    attempt began and was never confirmed are settled by the sweeper's timer, as on AWS.
 */
export async function recoverFromLastRun(
  db: ReturnType<typeof createDocumentClient>,
  ses: Pick<LocalSes, 'republish'>,
  killed: boolean,
  log?: (message: string, fields?: Record<string, unknown>) => void,
  /** The fan-out queue: each unfinished broadcast's lost next step is queued again (broadcast-recovery.ts). */
  fanOut?: { sqs: SQSClient; url: string },
) {
  if (fanOut) await resumeBroadcasts(db, fanOut.sqs, fanOut.url, log);
  const store = new DynamoSweepStore(db, TABLE_NAME);
  if (killed) {
    const reindexed = await reindexQueuedEmails(db, store);
    if (reindexed) log?.('re-indexed queued emails the last run was killed while changing', { reindexed });
  }
  const open = new Set(
    await store.queuedIds(FIRST_EMAIL_ID, emailIdAt(Date.now() + 1000), Number.MAX_SAFE_INTEGER),
  );
  if (open.size === 0) return;
  const republished = await ses.republish(open);
  const report = await runAs('sweep-emails', () =>
    sweep(sweepDeps(), { requeueAfterMs: 0, fromStart: true }),
  );
  // The scheduled emails due now or soon: their delayed messages were in the lost queue. One that
  // fell due while the service was down goes now.
  const scheduled = await runAs('dispatch-scheduled', () =>
    dispatchScheduled(schedulerDeps(), { all: true }),
  );
  log?.('recovered emails left open by the previous run', {
    open: open.size,
    republished,
    requeued: report.requeued,
    scheduled: scheduled.dispatched,
  });
}

/**
 * dynalite writes an item's index entries before the item itself, as separate writes (DynamoDB
 * writes an item at once). A kill between them can leave an email whose status item still says
 * `queued` out of the queued index, where neither the sweeper nor this recovery would look for it.
 * After a kill, every queued status item is found by a scan (local data is small) and the ones the
 * index lost get their index key written again, which puts them back in it.
 */
async function reindexQueuedEmails(db: ReturnType<typeof createDocumentClient>, store: DynamoSweepStore) {
  const emailKeys = new EmailKeys(parseLayout(process.env.TABLE_LAYOUT));
  const indexed = new Set(
    await store.queuedIds(FIRST_EMAIL_ID, emailIdAt(Date.now() + 1000), Number.MAX_SAFE_INTEGER),
  );
  let reindexed = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: 'sk = :status AND #status = :queued',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': keys.status, ':queued': 'queued' },
        ProjectionExpression: 'pk, scheduled_at, sent_at',
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const id = keys.idOf(String(item.pk));
      if (item.scheduled_at && !item.sent_at) {
        // A scheduled one's due-index keys too, written again (whether or not the kill lost them).
        const due = Object.entries(emailKeys.due(id, String(item.scheduled_at)));
        await writeIf(
          db,
          new UpdateCommand({
            TableName: TABLE_NAME,
            Key: { pk: item.pk, sk: keys.status },
            UpdateExpression: `SET ${due.map(([name]) => `${name} = :${name}`).join(', ')}`,
            ConditionExpression: '#status = :queued AND attribute_not_exists(sent_at)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':queued': 'queued',
              ...Object.fromEntries(due.map(([name, value]) => [`:${name}`, value])),
            },
          }),
        );
      }
      if (indexed.has(id)) continue;
      await db.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: { pk: item.pk, sk: keys.status },
          // The index key its status says, written again: dynalite puts the index entry back.
          UpdateExpression: 'SET #statusPk = :queuedPk',
          ConditionExpression: '#status = :queued',
          ExpressionAttributeNames: { '#status': 'status', '#statusPk': INDEXES.emailsByStatus.partitionKey },
          ExpressionAttributeValues: { ':queued': 'queued', ':queuedPk': emailKeys.withStatus(id, 'queued') },
        }),
      );
      reindexed++;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return reindexed;
}

/** Thrown when another local service still runs with the same data folder. */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`another npm start (process ${pid}) is using ${dataDir}`);
    this.name = 'DataDirInUse';
  }
}

/**
 * Whether the process that wrote the marker still runs. Killing `npm start`'s npm process leaves
 * its node process running (and holding the data), so a second start must not open the table.
 */
export function stillRunning(marker: string): boolean {
  const pid = Number(readFileSync(marker, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false; // gone: it was killed
  }
  throw new DataDirInUse(dirname(marker), pid);
}
