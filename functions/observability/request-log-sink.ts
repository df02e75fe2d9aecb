import type { RequestLogSink } from '../request-logs/model.js';
import { onLambda } from '../shared/config.js';

/**
 * Where request-log lines go. On Lambda: stdout, one line each, as the function's log group
 * receives it unchanged (the functions log as text, and a line written to stdout directly gets no
 * prefix); writing to stdout there is synchronous (a pipe, on Linux), so the line is in the log
 * before the handler returns and nothing is left pending when the invocation is frozen. The
 * subscription filter on the log group (lib/constructs/request-logs.ts) delivers the lines to the
 * writer. Elsewhere, where the local service (local/request-log-sink.ts) or a test
 * directs them, or nowhere.
 */
let destination: RequestLogSink | undefined;

/** Sends the lines of every function in this process to `sink` (undefined: back to the default). */
export function directRequestLogs(sink: RequestLogSink | undefined): void {
  destination = sink;
}

const stdoutSink: RequestLogSink = { write: (line) => void process.stdout.write(`${line}\n`) };

/** The sink the API functions' wiring gives the middleware: it looks up the destination per line. */
export const requestLogSink: RequestLogSink = {
  write(line) {
    const target = destination ?? (onLambda() ? stdoutSink : undefined);
    target?.write(line);
  },
};
