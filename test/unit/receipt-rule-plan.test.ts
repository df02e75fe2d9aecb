import { describe, expect, it } from 'vitest';
import {
  MAX_RECIPIENTS_PER_RULE,
  PLACEHOLDER_RECIPIENT,
  planRules,
  RuleCallPacer,
  ruleName,
  ruleNumber,
} from '../../functions/receiving/rules.js';

const P = 'svc';
const domains = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => `d${String(from + i).padStart(6, '0')}.example`);

describe('planning receipt rules', () => {
  it('names our rules and tells them from anyone else’s', () => {
    expect(ruleName(P, 3)).toBe('svc-receive-3');
    expect(ruleNumber(P, 'svc-receive-12')).toBe(12);
    for (const other of [
      'svc-receive-0',
      'svc-receive-',
      'svc-receive-1x',
      'other-receive-1',
      'svc-receive-01',
    ])
      expect(ruleNumber(P, other), other).toBeUndefined();
  });

  it('fills the first rule, and keeps the placeholder in it while no domain receives', () => {
    const first = new Map([[ruleName(P, 1), [PLACEHOLDER_RECIPIENT]]]);
    expect(planRules(P, ['B.example', 'a.example'], first)).toEqual({
      puts: [{ rule: 'svc-receive-1', recipients: ['a.example', 'b.example'], after: undefined }],
      removes: [],
      unplaced: [],
    });
    const filled = new Map([[ruleName(P, 1), ['a.example']]]);
    expect(planRules(P, [], filled).puts).toEqual([
      { rule: 'svc-receive-1', recipients: [PLACEHOLDER_RECIPIENT], after: undefined },
    ]);
    // Never a rule without recipients: SES would match every verified domain's addresses.
    expect(planRules(P, [], new Map()).puts[0]?.recipients).toEqual([PLACEHOLDER_RECIPIENT]);
  });

  it('changes nothing when the rules already hold the domains (in any order or case)', () => {
    const current = new Map([[ruleName(P, 1), ['B.example', 'a.example']]]);
    expect(planRules(P, ['a.example', 'b.example'], current)).toEqual({
      puts: [],
      removes: [],
      unplaced: [],
    });
  });

  it('opens a new rule past 500 recipients, after the one before it, and removes it when it empties', () => {
    const many = domains(MAX_RECIPIENTS_PER_RULE + 1);
    const plan = planRules(P, many, new Map([[ruleName(P, 1), [PLACEHOLDER_RECIPIENT]]]));
    expect(plan.puts.map((put) => [put.rule, put.recipients.length, put.after])).toEqual([
      ['svc-receive-1', 500, undefined],
      ['svc-receive-2', 1, 'svc-receive-1'],
    ]);
    const current = new Map(plan.puts.map((put) => [put.rule, put.recipients]));
    const last = many.at(-1) as string;
    expect(planRules(P, many.slice(0, -1), current)).toEqual({
      puts: [],
      removes: ['svc-receive-2'],
      unplaced: [],
    });
    expect(current.get('svc-receive-2')).toEqual([last]);
  });

  it('keeps each domain in the rule that holds it: one domain added or removed is one call', () => {
    const current = new Map([
      [ruleName(P, 1), domains(500)],
      [ruleName(P, 2), domains(10, 500)],
    ]);
    const added = planRules(P, [...domains(510), 'a-first.example'], current);
    expect(added.puts.map((put) => put.rule)).toEqual(['svc-receive-2']);
    expect(added.puts[0]?.recipients).toContain('a-first.example');
    const removed = planRules(
      P,
      domains(510).filter((d) => d !== 'd000003.example'),
      current,
    );
    expect(removed.puts.map((put) => [put.rule, put.recipients.length])).toEqual([['svc-receive-1', 499]]);
    expect(removed.removes).toEqual([]);
  });

  it('leaves rules that are not ours alone, and keeps a domain found twice in the lower rule', () => {
    const current = new Map([
      ['their-rule', ['theirs.example']],
      [ruleName(P, 1), ['a.example']],
      [ruleName(P, 2), ['a.example', 'b.example']],
    ]);
    const plan = planRules(P, ['a.example', 'b.example'], current);
    expect(plan.puts).toEqual([{ rule: 'svc-receive-2', recipients: ['b.example'], after: 'svc-receive-1' }]);
    expect(plan.removes).toEqual([]);
  });

  it('says which domains no rule can take past 200 rules', () => {
    const plan = planRules(P, domains(200 * 500 + 2), new Map());
    expect(plan.puts).toHaveLength(200);
    expect(plan.unplaced).toEqual(domains(2, 200 * 500));
  });
});

describe('pacing receipt-rule calls', () => {
  it('spaces calls a second apart from the one before, by the clock', async () => {
    let now = 10_000;
    const waits: number[] = [];
    const pacer = new RuleCallPacer({ now: () => new Date(now) }, async (ms) => {
      waits.push(ms);
      now += ms;
    });
    await pacer.turn();
    now += 300;
    await pacer.turn();
    await pacer.turn();
    now += 5_000;
    await pacer.turn();
    expect(waits).toEqual([700, 1_000]);
  });
});
