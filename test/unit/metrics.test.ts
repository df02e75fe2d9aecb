/**
 * The service's metrics as CloudWatch receives them: one embedded-metric-format line per invocation
 * that counted something, written when the invocation ends (also when it fails), in the namespace
 * and with the one dimension the stack's dashboard and alarms read (see constructs.test.ts).
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../functions/local/lambda-context.js';

type Emf = {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
} & Record<string, unknown>;

let lines: string[] = [];
const capture = (chunk: string | Uint8Array) => {
  lines.push(...String(chunk).split('\n').filter(Boolean));
  return true;
};

beforeAll(() => {
  // As the stack sets them (vitest turns metrics off everywhere else).
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  process.env.POWERTOOLS_METRICS_NAMESPACE = 'EmailService';
  process.env.POWERTOOLS_SERVICE_NAME = 'Test';
});
afterEach(() => {
  vi.restoreAllMocks();
  lines = [];
});

async function invoke(work: (count: (name: 'EmailsSent' | 'SesThrottled', n?: number) => void) => void) {
  const { counters } = await import('../../functions/observability/metrics.js');
  const { backgroundHandler } = await import('../../functions/observability/middleware.js');
  const handler = backgroundHandler(() => async () => work((name, n) => counters.count(name, n)));
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await handler(undefined, lambdaContext('process-send-queue', 10_000));
  } finally {
    vi.restoreAllMocks();
  }
}

const emfLines = () =>
  lines.map((line) => JSON.parse(line) as Emf).filter((record) => record._aws?.CloudWatchMetrics);

describe('metrics (Powertools, embedded metric format)', () => {
  it('writes what an invocation counted as one EMF line at its end: namespace EmailService, dimension service', async () => {
    await invoke((count) => {
      count('EmailsSent');
      count('EmailsSent');
      count('SesThrottled', 3);
    });
    const [line, ...more] = emfLines();
    expect(more).toEqual([]);
    expect(line?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'EmailService',
        Dimensions: [['service']],
        Metrics: expect.arrayContaining([
          { Name: 'EmailsSent', Unit: 'Count' },
          { Name: 'SesThrottled', Unit: 'Count' },
        ]),
      },
    ]);
    expect(line).toMatchObject({ service: 'Test', SesThrottled: 3 });
    // Counted twice in one invocation: both values, which CloudWatch sums.
    expect([line?.EmailsSent].flat().reduce((a, b) => (a as number) + (b as number), 0)).toBe(2);
  });

  it('writes them when the invocation fails too', async () => {
    await expect(
      invoke((count) => {
        count('EmailsSent');
        throw new Error('failed after sending');
      }),
    ).rejects.toThrow('failed after sending');
    expect(emfLines().map((l) => l._aws.CloudWatchMetrics[0]?.Metrics.map((m) => m.Name))).toEqual([
      ['EmailsSent'],
    ]);
  });

  it('writes nothing for an invocation that counted nothing (no empty line, no warning)', async () => {
    await invoke(() => undefined);
    expect(lines).toEqual([]);
  });
});
