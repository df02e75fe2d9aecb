import { gunzipSync, gzipSync } from 'node:zlib';
import type { CloudWatchLogsDecodedData, CloudWatchLogsEvent, CloudWatchLogsLogEvent } from 'aws-lambda';

/**
 * What a CloudWatch Logs subscription filter hands a Lambda function: `{awslogs: {data}}`, the data
 * base64 of gzip of the JSON below. `CONTROL_MESSAGE` is the one CloudWatch sends when the filter
 * is created, to check the destination is reachable: it carries no log events of the group.
 */
export function decodeAwslogs(event: CloudWatchLogsEvent): CloudWatchLogsDecodedData {
  return JSON.parse(gunzipSync(Buffer.from(event.awslogs.data, 'base64')).toString('utf8'));
}

/** The same, built: what the local sink invokes the writer with (local/request-log-sink.ts). */
export function encodeAwslogs(
  data: Omit<CloudWatchLogsDecodedData, 'messageType'> & { messageType: string },
): CloudWatchLogsEvent {
  return { awslogs: { data: gzipSync(JSON.stringify(data)).toString('base64') } };
}

export type { CloudWatchLogsEvent, CloudWatchLogsLogEvent };
