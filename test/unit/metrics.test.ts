/**
 * The service's metrics as CloudWatch receives them: one embedded-metric-format line per invocation
 * that counted something, written when the invocation ends (also when it fails), in the namespace
 * and with the one dimension the stack's dashboard and alarms read (see constructs.test.ts).
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../local/lambda-context.js';

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

  it('counts at once where Powertools is loaded at init (countersLoadedAtInit), written at the end as ever', async () => {
    vi.resetModules();
    const { countersLoadedAtInit } = await import('../../functions/observability/metrics-at-init.js');
    const counters = countersLoadedAtInit();
    const { backgroundHandler } = await import('../../functions/observability/middleware.js');
    const handler = backgroundHandler(() => async () => {
      counters.count('EmailsSent', 2);
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    try {
      await handler(undefined, lambdaContext('process-send-queue', 10_000));
    } finally {
      vi.restoreAllMocks();
    }
    const [line, ...more] = emfLines();
    expect(more).toEqual([]);
    expect(line).toMatchObject({ EmailsSent: 2 });
  });
});

describe('metrics when Powertools cannot be loaded', () => {
  afterEach(() => {
    vi.doUnmock('@aws-lambda-powertools/metrics');
    vi.resetModules();
  });

  it('loses the counts with an error in the log, and never fails the invocation whose work is done', async () => {
    vi.resetModules();
    vi.doMock('@aws-lambda-powertools/metrics', () => {
      throw new Error('chunk missing');
    });
    const { counters } = await import('../../functions/observability/metrics.js');
    const { backgroundHandler } = await import('../../functions/observability/middleware.js');
    const { logger } = await import('../../functions/observability/logger.js');
    const errors: unknown[][] = [];
    vi.spyOn(logger, 'error').mockImplementation((...args: unknown[]) => {
      errors.push(args);
    });
    const handler = backgroundHandler(() => async () => {
      counters.count('EmailsSent');
      return 'sent';
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    try {
      await expect(handler(undefined, lambdaContext('send-email', 10_000))).resolves.toBe('sent');
    } finally {
      vi.restoreAllMocks();
    }
    expect(emfLines()).toEqual([]);
    expect(errors).toEqual([[expect.stringMatching(/metrics lost/), expect.objectContaining({ counts: 1 })]]);
  });
});
