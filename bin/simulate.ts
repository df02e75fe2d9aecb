/**
 * `npm run simulate`: where the first ceiling is at 1k, 10k and 100k emails a second, for the
 * default settings and for those docs/scale.md recommends, from the model in simulate/model.ts,
 * and what 1,000 emails cost at 10,000 a second; what 1,000 received emails cost and a flood of
 * spam (simulate/receiving.ts). Prints markdown tables; calls nothing.
 */

import { CONTACT_SHARDS } from '../functions/adapters/dynamodb/table.js';
import { type ContactShape, importOf, segmentListing, writeUnitsPerContact } from './simulate/audience.js';
import {
  type BroadcastCase,
  broadcastCostPerThousand,
  broadcastTimes,
  MILLION,
  totalOfLines,
  totalsPartitionWrites,
  writeUnitsPerBroadcastEmail,
} from './simulate/broadcast.js';
import {
  costPerThousand,
  DEFAULT_SETUP,
  FIGURES,
  type Figures,
  RECEIPTS,
  RECOMMENDED_SETUP,
  rampSeconds,
  type Setup,
  type Stage,
  schedulePacing,
  simulate,
  stages,
  storedGigabytes,
  type Workload,
} from './simulate/model.js';
import {
  floodCost,
  type ReceivedMix,
  receivingCostPerThousand,
  SPAM,
  sesPartOf,
  TYPICAL_RECEIVED,
  totalOf,
} from './simulate/receiving.js';

export const LOADS = [1_000, 10_000, 100_000];
/** The columns: each setup with the figures it runs on. */
export const COLUMNS: { label: string; setup: Setup; figures: Figures }[] = [
  { label: DEFAULT_SETUP.name, setup: DEFAULT_SETUP, figures: FIGURES },
  { label: RECOMMENDED_SETUP.name, setup: RECOMMENDED_SETUP, figures: FIGURES },
];

const rate = (n: number) =>
  Number.isFinite(n)
    ? `${(n < 100 ? Math.round(n * 100) / 100 : Math.floor(n)).toLocaleString('en-US')}/s`
    : '—';
const percent = (share: number) => `${(share * 100).toFixed(2)} %`;
/** A rate floored to a tenth, a hundredth below 100 (what the schedule carries, to its precision). */
const tenths = (n: number) => {
  const step = n < 100 ? 100 : 10;
  return `${(Math.floor(n * step) / step).toLocaleString('en-US')}/s`;
};

/** SES rates and batch sizes the send schedule's precision and its item's writes are shown at. */
export const PACING_CASES = [
  { sesRate: 14, sendBatchSize: 10 },
  { sesRate: 1_000, sendBatchSize: 10 },
  { sesRate: 20_000, sendBatchSize: 20 },
  { sesRate: 20_000, sendBatchSize: 40 },
];

function pacingTable(): string[] {
  const lines = [
    "**The send schedule at SES's rate** (full batches of one-recipient emails, booked to the microsecond; the item planned at 60 % of its 1,000 writes/s)",
    '',
    row([
      'SES rate',
      'sendBatchSize',
      'paced at',
      'carried',
      'of the paced rate',
      'item writes/s',
      'of 1,000',
    ]),
    row(['---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const { sesRate, sendBatchSize } of PACING_CASES) {
    const p = schedulePacing(sesRate, sendBatchSize);
    lines.push(
      row([
        rate(sesRate),
        String(sendBatchSize),
        tenths(p.paced),
        tenths(p.carried),
        percent(p.carried / p.paced),
        p.writesPerSecond.toFixed(1),
        percent(p.itemShare),
      ]),
    );
  }
  return lines;
}
const dollars = (n: number) => `$${n.toFixed(4)}`;
const row = (cells: string[]) => `| ${cells.join(' | ')} |`;

function ceilingsTable(title: string, workload: Omit<Workload, 'emailsPerSecond'>): string[] {
  const lines = [`**${title}**`, '', row(['load', ...COLUMNS.map((c) => c.label)])];
  lines.push(row(['---', ...COLUMNS.map(() => '---')]));
  for (const load of LOADS) {
    const cells = COLUMNS.map(({ setup, figures }) => {
      const f = simulate(setup, { ...workload, emailsPerSecond: load }, figures);
      if (!f.firstCeiling)
        return `carries it (tightest: ${f.tightest.stage} at ${Math.round(f.utilisation * 100)} %)`;
      const next = f.ceilings[1];
      return `${f.firstCeiling.stage} at ${rate(f.firstCeiling.capacity)}${next ? `; then ${next.stage} at ${rate(next.capacity)}` : ''}`;
    });
    lines.push(row([rate(load), ...cells]));
  }
  return lines;
}

/** The received mail mixes the cost table shows, and the flood's rate (messages a minute). */
export const RECEIVED_MIXES: ReceivedMix[] = [TYPICAL_RECEIVED, SPAM];
export const FLOOD_PER_MINUTE = 1_000;

const usd = (n: number) =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

function receivingTables(): string[] {
  const costs = RECEIVED_MIXES.map((mix) => receivingCostPerThousand(mix));
  const lines = [
    '**Cost per 1,000 received emails** (us-east-1; SES receiving à la carte, one endpoint on email.received)',
    '',
    row(['item', ...RECEIVED_MIXES.map((m) => m.name), 'arithmetic (the first)']),
    row(['---', ...RECEIVED_MIXES.map(() => '---:'), '---']),
  ];
  (costs[0] ?? []).forEach((line, i) => {
    lines.push(row([line.item, ...costs.map((c) => dollars(c[i]?.dollars ?? 0)), line.arithmetic]));
  });
  lines.push(
    row(['**total**', ...costs.map((c) => `**${dollars(totalOf(c))}**`), '']),
    row(['of it SES', ...costs.map((c) => dollars(sesPartOf(c))), '']),
  );
  const flood = floodCost(FLOOD_PER_MINUTE, SPAM);
  lines.push(
    '',
    `**A flood of ${FLOOD_PER_MINUTE.toLocaleString('en-US')} spam messages a minute** to a domain with receiving enabled (${SPAM.name}, kept ${SPAM.retentionDays} days, one endpoint)`,
    '',
    row(['for', 'messages', 'cost', 'of it SES']),
    row(['---', '---:', '---:', '---:']),
  );
  for (const [label, at] of [
    ['an hour', flood.hour],
    ['a day', flood.day],
    ['30 days', flood.month],
  ] as const)
    lines.push(row([label, at.messages.toLocaleString('en-US'), usd(at.total), usd(at.ses)]));
  lines.push(
    '',
    `It keeps ${flood.concurrency.toFixed(1)} receive-email executions busy and takes ${Math.round(flood.writeUnitsPerSecond)} write units/s of the table: no ceiling, only the bill.`,
  );
  return lines;
}

/** The audience: write units a contact takes, a million-contact import, a million-member segment listed. */
function audienceTables(): string[] {
  const shapes: [string, ContactShape][] = [
    ['no segment, no topic', { segments: 0, topics: 0 }],
    ['1 segment, 1 topic', { segments: 1, topics: 1 }],
    ['3 segments, 2 topics', { segments: 3, topics: 2 }],
  ];
  const lines = [
    `**A million contacts** (us-east-1, DynamoDB on demand; ${CONTACT_SHARDS} shards a listing)`,
    '',
    row([
      'contact',
      'items',
      'write units (API, one transaction)',
      'import: rows/s',
      'import: 1,000,000 rows',
      'import cost',
      'held',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const [name, shape] of shapes) {
    const units = writeUnitsPerContact(shape);
    const run = importOf(1_000_000, shape);
    lines.push(
      row([
        name,
        String(units.items),
        String(units.transactional),
        Math.round(run.rowsPerSecond).toLocaleString('en-US'),
        `${Math.round(run.seconds / 60)} min, ${run.steps} steps`,
        usd(run.total),
        `${run.storageGb.toFixed(1)} GB`,
      ]),
    );
  }
  const listing = segmentListing(1_000_000);
  lines.push(
    '',
    `Listing a 1,000,000-contact segment to its end: ${listing.pages.toLocaleString('en-US')} pages of 100, ${listing.readUnitsPerPage} read units a page (a merge over ${CONTACT_SHARDS} shards, then the page's contacts), about ${Math.round(listing.seconds / 60)} minutes one page after another, ${usd(listing.cost)}; no scan.`,
  );
  return lines;
}

/** The SES rates (and 24-hour quotas) a million-recipient broadcast is shown at. */
export const BROADCAST_RATES: { sesRate: number; quota24h: number }[] = [
  { sesRate: 14, quota24h: 50_000 },
  { sesRate: 100, quota24h: 1_000_000 },
  { sesRate: 1_000, quota24h: -1 },
  { sesRate: 10_000, quota24h: -1 },
];
/** Tracked engagement for the cost's second column: opens and clicks an email. */
export const TRACKED = { opensPerEmail: 0.3, clicksPerEmail: 0.05 };

const duration = (seconds: number) => {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
};

/** A broadcast of a million: its time at several SES rates, its write units an email, its cost per 1,000. */
function broadcastTables(): string[] {
  const lines = [
    `**A broadcast to ${MILLION.recipients.toLocaleString('en-US')} contacts** (one email each, with a topic; no transactional mail meanwhile: what it takes is the broadcast's share less)`,
    '',
    row([
      'SES rate',
      '24-hour quota',
      'sent at',
      'bound by',
      'fan-out done',
      'last email to SES',
      "the broadcast's partition (of 1,000 WU/s)",
      'cost per 1,000 (SES aside)',
    ]),
    row(['---:', '---:', '---:', '---', '---:', '---:', '---:', '---:']),
  ];
  for (const { sesRate, quota24h } of BROADCAST_RATES) {
    const c: BroadcastCase = { ...MILLION, sesRate, quota24h };
    const t = broadcastTimes(c);
    lines.push(
      row([
        rate(sesRate),
        quota24h < 0 ? 'unlimited' : quota24h.toLocaleString('en-US'),
        rate(t.rate),
        t.bound,
        duration(t.fanOutSeconds),
        duration(t.sendSeconds),
        `${Math.round(totalsPartitionWrites(c)).toLocaleString('en-US')} WU/s`,
        dollars(totalOfLines(broadcastCostPerThousand(c))),
      ]),
    );
  }
  const tracked: BroadcastCase = { ...MILLION, ...TRACKED };
  const plain = broadcastCostPerThousand(MILLION);
  const withOpens = broadcastCostPerThousand(tracked);
  lines.push(
    '',
    `**Write units of one broadcast email** (counted from the code: email-store.ts createMany, the send consumer's and the events consumer's writes, the tally and metrics counters)`,
    '',
    row([
      'term',
      'sent and delivered',
      `tracked (${TRACKED.opensPerEmail} opens, ${TRACKED.clicksPerEmail} clicks)`,
    ]),
    row(['---', '---:', '---:']),
  );
  const a = writeUnitsPerBroadcastEmail(MILLION);
  const b = writeUnitsPerBroadcastEmail(tracked);
  a.terms.forEach(([term, n], i) => {
    lines.push(row([term, n.toFixed(2), (b.terms[i]?.[1] ?? 0).toFixed(2)]));
  });
  lines.push(row(['**total**', `**${a.total.toFixed(2)}**`, `**${b.total.toFixed(2)}**`]));
  lines.push(
    '',
    `**Cost per 1,000 broadcast emails** (us-east-1, on demand, on top of SES's $0.10)`,
    '',
    row(['item', 'sent and delivered', 'tracked', 'arithmetic (the first)']),
    row(['---', '---:', '---:', '---']),
  );
  plain.forEach((line, i) => {
    lines.push(row([line.item, dollars(line.dollars), dollars(withOpens[i]?.dollars ?? 0), line.arithmetic]));
  });
  lines.push(
    row(['**total**', `**${dollars(totalOfLines(plain))}**`, `**${dollars(totalOfLines(withOpens))}**`, '']),
  );
  return lines;
}

export function report(): string {
  const receipts: Workload = { ...RECEIPTS, emailsPerSecond: 10_000 };
  const withEndpoint: Omit<Workload, 'emailsPerSecond'> = { ...RECEIPTS, webhookEndpoints: 1 };
  const out: string[] = [];
  out.push(
    '# npm run simulate',
    '',
    `Workload: one-recipient receipts, single POST /v1/emails spread over ${RECEIPTS.apiKeys} keys, no webhook endpoint (what npm run bench counts) unless said.`,
    '',
    '**What each stage carries** (emails/s)',
    '',
    row(['stage', 'limit (recommended settings)', ...COLUMNS.map((c) => c.label), 'moved by']),
    row(['---', '---', ...COLUMNS.map(() => '---:'), '---']),
  );
  const bySetup = COLUMNS.map((c) =>
    stages(c.setup, { ...withEndpoint, emailsPerSecond: 10_000 }, c.figures),
  );
  const recommended = bySetup[1] as Stage[];
  recommended.forEach((stage, i) => {
    out.push(
      row([stage.stage, stage.limit, ...bySetup.map((list) => rate(list[i]?.capacity ?? 0)), stage.settings]),
    );
  });
  out.push(
    '',
    '(The two webhook rows are for one endpoint subscribed to email.sent and email.delivered; — is no ceiling for this workload.)',
    '',
    ...pacingTable(),
    '',
    ...ceilingsTable('First ceiling: receipts, no webhook endpoint', RECEIPTS),
    '',
    ...ceilingsTable('First ceiling: receipts, one endpoint on email.sent and email.delivered', withEndpoint),
    '',
  );
  for (const setup of [RECOMMENDED_SETUP]) {
    const lines = costPerThousand(setup, receipts);
    out.push(
      `**Cost per 1,000 emails at 10,000/s, ${setup.name}** (us-east-1, on top of SES's $0.10)`,
      '',
      row(['item', 'DynamoDB on demand', 'DynamoDB provisioned', 'arithmetic']),
      row(['---', '---:', '---:', '---']),
    );
    for (const l of lines) out.push(row([l.item, dollars(l.onDemand), dollars(l.provisioned), l.arithmetic]));
    const total = (key: 'onDemand' | 'provisioned') => lines.reduce((sum, l) => sum + l[key], 0);
    out.push(
      row(['**total**', `**${dollars(total('onDemand'))}**`, `**${dollars(total('provisioned'))}**`, '']),
    );
    const gb = storedGigabytes(setup, receipts);
    out.push(
      '',
      `Held in steady state at 10,000/s, kept ${setup.emailRetentionDays} days: ${Math.round(gb).toLocaleString('en-US')} GB.`,
    );
    const ramp = rampSeconds(setup, receipts);
    out.push(
      `From idle to 10,000/s: the API functions in ${Math.ceil(ramp.api)} s, the send consumers in ${Math.ceil(ramp.send)} s, the events consumers in ${Math.ceil(ramp.events)} s (Lambda's scaling rates; DynamoDB's warm throughput is separate).`,
    );
  }
  out.push('', ...receivingTables(), '', ...audienceTables(), '', ...broadcastTables());
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(report());
