import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RecordedRun } from '../../bin/bench/record.js';
import { callsPerEmail, totalsPerEmail } from '../../bin/simulate/calls.js';

/**
 * The model cannot drift from the code: its per-email calls (bin/simulate/calls.ts), evaluated at
 * the batch fills of a recorded bench run (`npm run bench:record` writes bin/bench/recorded/cost.json:
 * section 3, 200 receipts metered as AWS bills them), match that run's requests, write units and
 * read units within 5 %. The local runtime's own calls (its pollers' receives, and the local SES's
 * event sends, which the bench counts as SES's SNS publish and SQS delivery) are the bench's
 * modelling, as they are the model's. A change to what the code calls fails this until the model's
 * term changes with it and the run is recorded again.
 */
const run = JSON.parse(
  readFileSync(new URL('../../bin/bench/recorded/cost.json', import.meta.url), 'utf8'),
) as RecordedRun;
const model = totalsPerEmail(run.fill);

describe('the model against a recorded bench run', () => {
  it.each(['requests', 'writeUnits', 'readUnits'] as const)(
    'per email, %s within 5 % at the run’s batch fills',
    (measure) => {
      expect(Math.abs(model[measure] - run.perEmail[measure]) / run.perEmail[measure]).toBeLessThanOrEqual(
        0.05,
      );
    },
  );

  it('models every function the run metered, and the request logs’ write units a request within 10 %', () => {
    const metered = new Set(
      run.lines.map((line) => line.label.split(' | ')[0]).filter((fn) => fn !== '(local runtime)'),
    );
    const modelled = new Set(callsPerEmail(run.fill).map((term) => term.fn));
    for (const fn of metered) expect(modelled, fn).toContain(fn);
    const logs = callsPerEmail(run.fill).find((term) => term.fn === 'write-request-logs');
    expect(
      Math.abs((logs?.writeUnits ?? 0) - run.requestLogs.writeUnitsPerRequest) /
        run.requestLogs.writeUnitsPerRequest,
    ).toBeLessThanOrEqual(0.1);
  });
});
