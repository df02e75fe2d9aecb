/**
 * What the benchmarks of built functions started cold share (sections 1 and 9 of `npm run bench`):
 * the local service, a send queue of the bench's own (the bundled send functions queue to it, and
 * only the bundled consumer reads it), the fixtures of the typical requests (bin/bench/typical.ts),
 * and a way to start a built function in a fresh Node process with the environment Lambda gives
 * it (AWS_LAMBDA_FUNCTION_NAME set, so its dependencies are built at init).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ensureQueueWithDlq } from '../../local/resources.js';
import { type LocalService, startLocalService } from '../../local/service.js';
import { startReceiver } from '../../test/support/webhook-receiver.js';
import { BENCH_SERVICE } from './throughput.js';
import { answeredWell, type Fixtures, makeFixtures, typicalOf } from './typical.js';

/** Imports a built function, calls its handler once, prints one JSON line (its result, timings). */
export const BUNDLE_RUNNER = fileURLToPath(new URL('../../test/support/bundle-runner.mjs', import.meta.url));

export interface ColdService {
  readonly service: LocalService;
  readonly fx: Fixtures;
  /**
   * Starts `node <runner> <dir> <event.json> <name> ...args` with the function's environment and
   * `env`, and returns its stdout (the runner prints its result as the last line).
   */
  start(
    runner: string,
    dir: string,
    name: string,
    event: unknown,
    options?: { args?: string[]; env?: Record<string, string> },
  ): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the local service and makes the fixtures. `dirOf(name)` gives the directory of a built
 * function: send-email's (whose queued message is the consumer's typical request) and
 * list-emails' (whose request-log line is the writer's) are run from there.
 */
export async function startColdService(
  out: string,
  dirOf: (name: string) => Promise<string>,
): Promise<ColdService> {
  process.env.LOG_LEVEL ??= 'silent';
  const service = await startLocalService({ ...BENCH_SERVICE, rateLimitPerSecond: 100_000 });
  const receiver = await startReceiver();
  const close = async () => {
    await receiver.close();
    await service.stop();
  };
  try {
    const sqs = new SQSClient({
      endpoint: service.endpoints.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const queue = await ensureQueueWithDlq(sqs, 'bench-cold-send', {
      maxReceiveCount: 5,
      visibilityTimeoutSeconds: 30,
    });
    const env = {
      ...process.env,
      SEND_QUEUE_URL: queue.queue.url,
      SEND_DEAD_LETTER_QUEUE_URL: queue.dlq.url,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    };
    let events = 0;
    const start: ColdService['start'] = async (runner, dir, name, event, options = {}) => {
      const file = join(out, `event-${++events}.json`);
      writeFileSync(file, JSON.stringify(event));
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [runner, dir, file, name, ...(options.args ?? [])],
        {
          env: { ...env, AWS_LAMBDA_FUNCTION_NAME: name, ...options.env },
          maxBuffer: 16 * 1024 * 1024,
          timeout: 60_000,
        },
      );
      return stdout;
    };
    const result = (stdout: string) =>
      (JSON.parse(stdout.trim().split('\n').at(-1) as string) as { result: unknown }).result;
    const typical = (name: string) => typicalOf(name) as (f: Fixtures) => unknown;

    const fx = await makeFixtures(service, {
      receiverUrl: receiver.url,
      requestLogLine: '',
      sendMessage: async () => {
        const sent = result(
          await start(
            BUNDLE_RUNNER,
            await dirOf('send-email'),
            'send-email',
            await typical('send-email')(fx),
            {
              env: { BUNDLE_RUNNER_RECORD: 'false' },
            },
          ),
        );
        if (!answeredWell(sent)) throw new Error(`send-email: ${JSON.stringify(sent)}`);
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.queue.url,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: 5,
          }),
        );
        const [message] = Messages;
        if (!message?.Body) throw new Error('the bundled send-email queued nothing');
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: queue.queue.url, ReceiptHandle: message.ReceiptHandle }),
        );
        return message.Body;
      },
    });
    // A request-log line as an API function writes it on Lambda (stdout), for the writer.
    const listed = await start(
      BUNDLE_RUNNER,
      await dirOf('list-emails'),
      'list-emails',
      await typical('list-emails')(fx),
      {
        env: { BUNDLE_RUNNER_RECORD: 'false' },
      },
    );
    const line = listed.split('\n').find((l) => l.includes('"log_type":"api_request"'));
    if (!line) throw new Error('list-emails wrote no request-log line');
    fx.requestLogLine = line;
    return { service, fx, start, close };
  } catch (error) {
    await close();
    throw error;
  }
}
