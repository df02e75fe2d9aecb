import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_LOG_RETENTION_DAYS } from '../functions/request-logs/model.js';

/**
 * The retention values CloudWatch Logs accepts for a log group (PutRetentionPolicy's
 * `retentionInDays`, as its API reference lists them; CDK's RetentionDays has the same, and
 * INFINITE for none).
 */
export const CLOUDWATCH_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/** The longest retention CloudWatch Logs accepts that keeps events no longer than `days` (1 at least: its least). */
export function cloudWatchRetentionWithin(days: number): RetentionDays {
  let within: number = CLOUDWATCH_RETENTION_DAYS[0];
  for (const allowed of CLOUDWATCH_RETENTION_DAYS) if (allowed <= days) within = allowed;
  return within as RetentionDays;
}

const daysOf = (retention: RetentionDays) =>
  retention === RetentionDays.INFINITE ? Number.POSITIVE_INFINITY : Number(retention);

export interface RequestLogPrivacySettings {
  /** Whether request logs are kept at all (the stack's `requestLogs`). */
  readonly requestLogs: boolean;
  /** Days the table keeps a request log (the stack's `logRetentionDays`); undefined: the default. */
  readonly logRetentionDays: number | undefined;
  /** Days an email is kept (the stack's `emailRetentionDays`); 0: until deleted. */
  readonly emailRetentionDays: number;
  /** The operator's opt-in (`requestLogsOutliveEmails`): request logs may be kept longer than the emails. */
  readonly outliveEmails: boolean;
  /** Whether the logs keep the requests' bodies (`requestLogBodies`). */
  readonly bodies: boolean;
  /** What every function's log group keeps otherwise (the stack's `logRetention`). */
  readonly functionLogRetention: RetentionDays;
}

export interface RequestLogRetention {
  /** Days the table keeps each log from its request (the writer's LOG_RETENTION_DAYS, its items' TTL). */
  readonly tableDays: number;
  /** The retention of the log groups that receive the lines: the API functions'. */
  readonly lineLogGroups: RetentionDays;
  /** Settings that were capped or change nothing, for the synth's warnings. */
  readonly warnings: readonly string[];
}

/**
 * How long the two copies of a request log are kept (docs/logs.md): the item in the table, and the
 * line in its function's log group. A log shows a request's addresses, subject and the start of
 * its HTML, so neither copy outlives the email it is about unless the operator opts in: the table
 * keeps it `min(logRetentionDays, emailRetentionDays)` days (an email's retention of 0 keeps emails
 * until deleted, and then logs their `logRetentionDays`), and the log groups the longest
 * retention CloudWatch accepts within that (30 → 30, 10 → 7, 2 → 1) and within their own.
 */
export function requestLogRetention(settings: RequestLogPrivacySettings): RequestLogRetention {
  const { emailRetentionDays, outliveEmails } = settings;
  const logRetentionDays = settings.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
  const warnings: string[] = [];
  const emailsKept = emailRetentionDays > 0;
  const capped = emailsKept && !outliveEmails && logRetentionDays > emailRetentionDays;
  const tableDays = capped ? emailRetentionDays : logRetentionDays;
  // Capped by the operator's own shorter email retention, the default says nothing.
  if (capped && settings.requestLogs && settings.logRetentionDays !== undefined)
    warnings.push(
      `logRetentionDays (${logRetentionDays}) is above emailRetentionDays (${emailRetentionDays}): request logs, which show the emails' addresses and content, are kept ${emailRetentionDays} days, as the emails are. Set requestLogsOutliveEmails=true to keep them ${logRetentionDays} days.`,
    );
  if (outliveEmails && !settings.requestLogs)
    warnings.push('requestLogsOutliveEmails=true changes nothing: request logs are off (requestLogs=false).');
  else if (outliveEmails && (!emailsKept || logRetentionDays <= emailRetentionDays))
    warnings.push(
      `requestLogsOutliveEmails=true changes nothing: request logs are kept ${logRetentionDays} days (logRetentionDays), ${emailsKept ? `within the emails' ${emailRetentionDays}` : 'and emails until deleted'}.`,
    );
  if (!settings.bodies && !settings.requestLogs)
    warnings.push('requestLogBodies=false changes nothing: request logs are off (requestLogs=false).');
  const lineLogGroups = cloudWatchRetentionWithin(Math.min(tableDays, daysOf(settings.functionLogRetention)));
  return { tableDays, lineLogGroups, warnings };
}
