import { describe, expect, it } from 'vitest';
import { type End, endEmail } from '../../functions/emails/end.js';
import { ENDINGS, type EndingName, TRANSITIONS } from '../../functions/emails/lifecycle.js';
import type { FinishOptions } from '../../functions/emails/ports.js';
import type { TerminalStatus } from '../../functions/emails/status.js';
import type { CounterName } from '../../functions/shared/ports.js';
import type { WebhookEvent } from '../../functions/webhooks/model.js';
import { emailContent } from '../support/fakes.js';

/** endEmail against recording fakes: what it wrote, counted and raised. */
function ending(finishes: boolean) {
  const finished: { status: TerminalStatus; options: FinishOptions | undefined }[] = [];
  const counters: [CounterName, number | undefined][] = [];
  const metrics: Record<string, number>[] = [];
  const raised: WebhookEvent[] = [];
  const deps = {
    emails: {
      finish: async (_id: string, status: TerminalStatus, _at: string, options?: FinishOptions) => {
        finished.push({ status, options });
        return finishes;
      },
    },
    counters: { count: (name: CounterName, value?: number) => void counters.push([name, value]) },
    metrics: { count: async (_domain: string, counts: Record<string, number>) => void metrics.push(counts) },
    events: {
      subscriptions: async () => ({
        wants: () => true,
        publish: async (events: WebhookEvent[]) => void raised.push(...events),
      }),
    },
  };
  return { deps, finished, counters, metrics, raised };
}

const end = (name: EndingName, over: Partial<End> = {}): End => ({
  ending: name,
  at: '2026-11-27T12:00:00.000Z',
  reason: 'why',
  email: emailContent(),
  ...over,
});

describe("an email's end, in one place (lifecycle.ts ENDINGS, end.ts)", () => {
  it('names, for each ending, a final transition of the lifecycle', () => {
    for (const [name, e] of Object.entries(ENDINGS)) {
      expect(TRANSITIONS[e.as], name).toBeDefined();
      expect(['cancel', 'endUnsent', 'failAttempt', 'settleSent', 'settleEvent'], name).toContain(e.as);
    }
  });

  it.each(Object.keys(ENDINGS) as EndingName[])(
    '%s: the write, then exactly the consequences it names',
    async (name) => {
      const declared = ENDINGS[name];
      const status: TerminalStatus = 'status' in declared ? declared.status : 'failed';
      const { deps, finished, counters, metrics, raised } = ending(true);
      expect(await endEmail(deps, 'em_1', end(name, 'status' in declared ? {} : { status }))).toBe(true);
      expect(finished).toEqual([
        { status, options: expect.objectContaining({ as: declared.as, reason: 'why' }) },
      ]);
      expect(counters.map(([counter]) => counter)).toEqual('counter' in declared ? [declared.counter] : []);
      expect(metrics).toEqual('metric' in declared ? [{ [declared.metric]: 1 }] : []);
      expect(raised.map((e) => e.type)).toEqual('webhook' in declared ? [declared.webhook] : []);
    },
  );

  it.each(Object.keys(ENDINGS) as EndingName[])(
    '%s: nothing follows a write that changed nothing (ended before)',
    async (name) => {
      const declared = ENDINGS[name];
      const { deps, counters, metrics, raised } = ending(false);
      expect(await endEmail(deps, 'em_1', end(name, 'status' in declared ? {} : { status: 'failed' }))).toBe(
        false,
      );
      expect([counters, metrics, raised]).toEqual([[], [], []]);
    },
  );

  it('a settle its recipients decide has its metric and webhook only when it ends failed', async () => {
    const delivered = ending(true);
    await endEmail(delivered.deps, 'em_1', end('noFinalEvent', { status: 'delivered' }));
    expect(delivered.counters.map(([c]) => c)).toEqual(['EmailsFailedNoFinalEvent']);
    expect([delivered.metrics, delivered.raised]).toEqual([[], []]);
    const failed = ending(true);
    await endEmail(failed.deps, 'em_1', end('noFinalEvent', { status: 'failed' }));
    expect(failed.metrics).toEqual([{ failed: 1 }]);
    expect(failed.raised.map((e) => e.data)).toEqual([
      expect.objectContaining({ email_id: 'em_1', failed: { reason: 'why' } }),
    ]);
  });

  it('reads the email back at most once, and only when a consequence needs it', async () => {
    let reads = 0;
    const email = async () => {
      reads++;
      return emailContent();
    };
    const { deps } = ending(true);
    await endEmail(deps, 'em_1', end('unknownOutcome', { email }));
    expect(reads).toBe(1);
    const quiet = ending(true);
    await endEmail({ emails: quiet.deps.emails }, 'em_1', end('unknownOutcome', { email }));
    expect(reads).toBe(1);
  });

  it('counts the metric under no domain, and fails the webhook loudly (WebhookPublishFailed), when the email cannot be read back', async () => {
    const { deps, counters, metrics, raised } = ending(true);
    const email = async () => {
      throw Object.assign(new Error('Throughput exceeds the table'), { name: 'ThrottlingException' });
    };
    expect(await endEmail(deps, 'em_1', end('deadLettered', { email }))).toBe(true);
    expect(metrics).toEqual([{ failed: 1 }]);
    expect(raised).toEqual([]);
    expect(counters.map(([c]) => c)).toEqual(['EmailsFailedDeadLetter', 'WebhookPublishFailed']);
  });

  it("builds an ending SES's event brings from what the event says, reading no content", async () => {
    const { deps, metrics } = ending(true);
    let reads = 0;
    await endEmail(deps, 'em_1', {
      ending: 'providerFailed',
      at: '2026-11-27T12:00:00.000Z',
      source: { from: 'Acme <hello@acme.test>', subject: 'Hi', tags: {} },
      email: async () => {
        reads++;
        return emailContent();
      },
    });
    expect(reads).toBe(0);
    expect(metrics).toEqual([{ failed: 1 }]);
  });
});
