import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  COUNTED_METRICS,
  type CountedMetric,
  type HourCounts,
  METRIC_RETENTION_DAYS,
  type MetricCounts,
  MetricsBehindError,
} from '../../metrics/model.js';
import type { MetricsCounter, MetricsReader, MetricsRollUp } from '../../metrics/ports.js';
import { queryPages, writeIf } from './client.js';
import { keys, METRICS_BROADCAST_MARK, shardOf, TTL_ATTRIBUTE } from './table.js';

/**
 * The email metrics' counters in the single table (metrics/model.ts).
 *
 * **Writes.** A count is one UpdateItem (ADD) on a small item (the keys and at most 14 numbers,
 * under 1 KB: one write unit): `METRICS#HOUR#<UTC hour>#<shard>` / `<sender domain>`, the shard
 * one of METRIC_SHARDS chosen by a hash of the email's id. An hour's counts of one domain are
 * spread over 64 partitions, so 10,000 emails/s (2 counts each: the send and the delivery) put about
 * 310 writes/s on each, under the 1,000 a partition takes (docs/scale.md).
 *
 * **Roll-up.** Once an hour is over (and ROLL_UP_GRACE_MS more, for writes begun in it), the sweep
 * reads its 64 shards and writes each domain's sums into the day's item
 * (`METRICS#DAYS#<month>#<nn>`, one of DAY_PARTITIONS by a hash of the domain / `<day>#<domain>`, attribute `h13` for 13:00 UTC; a write costs the
 * whole item: late in the day up to 5.5 KB, 6 write units, with all 14 counts, about 2 KB usually), then moves the
 * `METRICS`/`ROLLED` mark past it. Writing a sum is idempotent: a run that dies and runs again
 * writes the same.
 *
 * **Broadcasts.** A broadcast email's counts go to the same shard under sk `<domain>#B#<broadcast
 * id>` (keys.metricsHourSk) instead of `<domain>`: still one write a count. A domain's counts are
 * the sum of its items; the roll-up writes that sum into the domain's day item as before, and each
 * broadcast's own into its day item (`METRICS#BDAYS#<month>#<nn>`, the broadcast's partition by a
 * hash of its id / `<broadcast id>#<day>#<domain>`), so `broadcast_id` reads one range of one
 * partition a month, and the `broadcast` dimension the month's DAY_PARTITIONS partitions.
 *
 * **Reads.** Hours before the mark come from the day items (DAY_PARTITIONS Queries per month, an item per day
 * and domain with counts); hours from the mark on from the shards (64 Queries an hour; normally
 * the current hour and at most the one before; at most MAX_RAW_HOURS, PARALLEL_QUERIES Queries at once).
 * Every item expires METRIC_RETENTION_DAYS after its hour.
 */
export const METRIC_SHARDS = 64;
/**
 * The partitions of a month's day items, a domain's chosen by a hash of its name: an hour's roll-up
 * writes one item per domain (up to 6 write units late in the day), so 5,000 domains' roll-up is
 * 30,000 units spread over 16 partitions (about 2 s at 1,000 a second each) instead of half a
 * minute of throttling on one; a read takes 16 Queries a month of its range.
 */
export const DAY_PARTITIONS = 16;
/** How long after an hour ends its counters are rolled up (a count begun in the hour lands by then). */
export const ROLL_UP_GRACE_MS = 5 * 60_000;
/** At most this many hours rolled up a run (a sweep that was stopped catches up over a few runs). */
export const MAX_ROLLED_PER_RUN = 6;
/**
 * Before the first roll-up, the hours this far back are read from their shards (and the first
 * roll-up starts there): a new table has no counts older than its first sweep, which runs a minute
 * after the stack is up, so this is margin (and a read before any roll-up stays cheap).
 */
export const FIRST_ROLL_UP_HOURS = 3;
/** Shard queries in flight at once, for one read or roll-up, however many hours it reads. */
export const PARALLEL_QUERIES = 16;
/**
 * At most this many hours a read takes from their shards (64 Queries each). Normally one or two
 * are not rolled up; more only when the sweep has stopped (it catches up 6 hours a minute once it
 * runs again). A read needing more is refused (MetricsBehindError, a 503) rather than answered
 * with hours missing or thousands of Queries.
 */
export const MAX_RAW_HOURS = 12;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
type Item = Record<string, unknown>;

const hourText = (ms: number) => new Date(ms).toISOString().slice(0, 13);
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const monthText = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const hourAttr = (ms: number) => `h${new Date(ms).toISOString().slice(11, 13)}`;

const countsOf = (item: Item): MetricCounts => {
  const counts: MetricCounts = {};
  for (const name of COUNTED_METRICS)
    if (typeof item[name] === 'number' && item[name] > 0) counts[name] = item[name] as number;
  return counts;
};

/** A counter's sk (keys.metricsHourSk): its domain, and its broadcast if it is one's. */
function splitSk(sk: string): { domain: string; broadcastId?: string } {
  const at = sk.lastIndexOf(METRICS_BROADCAST_MARK);
  return at < 0
    ? { domain: sk }
    : { domain: sk.slice(0, at), broadcastId: sk.slice(at + METRICS_BROADCAST_MARK.length) };
}

/** An hour's sums by counter sk, summed by domain (a domain's broadcast emails are its emails too). */
function byDomain(sums: ReadonlyMap<string, MetricCounts>): Map<string, MetricCounts> {
  const out = new Map<string, MetricCounts>();
  for (const [sk, counts] of sums) {
    const { domain } = splitSk(sk);
    const sum = out.get(domain) ?? {};
    for (const [name, n] of Object.entries(counts) as [CountedMetric, number][])
      sum[name] = (sum[name] ?? 0) + n;
    out.set(domain, sum);
  }
  return out;
}

/** A day item's sk: `<day>#<domain>` (keys.metricsDaySk), or a broadcast's `<id>#<day>#<domain>`. */
function daySkOf(sk: string, ofBroadcast: boolean): { day: number; domain: string; broadcastId?: string } {
  const at = ofBroadcast ? sk.indexOf('#') : -1;
  const rest = sk.slice(at + 1);
  return {
    day: Date.parse(`${rest.slice(0, 10)}T00:00:00Z`),
    domain: rest.slice(11),
    ...(ofBroadcast ? { broadcastId: sk.slice(0, at) } : {}),
  };
}

/** Runs `work` over `items`, `limit` at a time. */
async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i] as T);
      }
    }),
  );
  return results;
}

export class DynamoMetricsStore implements MetricsCounter, MetricsReader, MetricsRollUp {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  private expiry(hourMs: number) {
    return Math.ceil((hourMs + METRIC_RETENTION_DAYS * DAY_MS) / 1000);
  }

  async count(domain: string, counts: MetricCounts, spreadBy: string, broadcastId?: string): Promise<void> {
    const entries = Object.entries(counts) as [CountedMetric, number][];
    if (!entries.length) return;
    const hourMs = Math.floor(this.now() / HOUR_MS) * HOUR_MS;
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: {
          pk: keys.metricsHour(hourText(hourMs), shardOf(spreadBy, METRIC_SHARDS)),
          sk: keys.metricsHourSk(domain, broadcastId),
        },
        UpdateExpression: `ADD ${entries.map((_, i) => `#m${i} :m${i}`).join(', ')} SET #ttl = if_not_exists(#ttl, :ttl)`,
        ExpressionAttributeNames: {
          ...Object.fromEntries(entries.map(([name], i) => [`#m${i}`, name])),
          '#ttl': TTL_ATTRIBUTE,
        },
        ExpressionAttributeValues: {
          ...Object.fromEntries(entries.map(([, n], i) => [`:m${i}`, n])),
          ':ttl': this.expiry(hourMs),
        },
      }),
    );
  }

  /** The first hour not rolled up yet. */
  private async rolledThrough(): Promise<number> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: keys.metrics, sk: keys.metricsRolledSk },
        ConsistentRead: true,
      }),
    );
    if (typeof Item?.through === 'number') return Item.through;
    return Math.floor(this.now() / HOUR_MS) * HOUR_MS - FIRST_ROLL_UP_HOURS * HOUR_MS;
  }

  /**
   * Hours' counts, summed over their shards, per hour and counter sk (a domain, or a domain and a
   * broadcast: splitSk): every (hour, shard) Query in one bounded pool.
   */
  private async rawHours(hours: readonly number[]): Promise<Map<number, Map<string, MetricCounts>>> {
    const queries = hours.flatMap((hourMs) =>
      Array.from({ length: METRIC_SHARDS }, (_, shard) => ({ hourMs, shard })),
    );
    const pages = await inParallel(queries, PARALLEL_QUERIES, async ({ hourMs, shard }) => {
      const items: Item[] = [];
      for await (const page of queryPages(this.db, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.metricsHour(hourText(hourMs), shard) },
      }))
        items.push(...page);
      return items;
    });
    const byHour = new Map<number, Map<string, MetricCounts>>(hours.map((h) => [h, new Map()]));
    for (const [i, items] of pages.entries()) {
      const sums = byHour.get((queries[i] as { hourMs: number }).hourMs) as Map<string, MetricCounts>;
      for (const item of items) {
        const sum = sums.get(String(item.sk)) ?? {};
        for (const [name, n] of Object.entries(countsOf(item)) as [CountedMetric, number][])
          sum[name] = (sum[name] ?? 0) + n;
        sums.set(String(item.sk), sum);
      }
    }
    return byHour;
  }

  async hours(
    fromHourMs: number,
    toHourMs: number,
    byBroadcast?: { ids?: readonly string[] },
  ): Promise<HourCounts[]> {
    const through = await this.rolledThrough();
    const found: HourCounts[] = [];
    // Rolled up: the day items of the months the hours span.
    const lastRolled = Math.min(toHourMs, through - HOUR_MS);
    if (fromHourMs <= lastRolled) {
      const months = new Set<string>();
      for (let day = Math.floor(fromHourMs / DAY_MS) * DAY_MS; day <= lastRolled; day += DAY_MS)
        months.add(monthText(day));
      const from = dayText(fromHourMs);
      const to = dayText(lastRolled);
      const queries = [...months].flatMap((month): { pk: string; range?: [string, string] }[] =>
        !byBroadcast
          ? Array.from({ length: DAY_PARTITIONS }, (_, partition) => ({
              pk: keys.metricsDays(month, partition),
              range: [from, `${to}#\uffff`],
            }))
          : byBroadcast.ids
            ? byBroadcast.ids.map((id) => ({
                pk: keys.metricsBroadcastDays(month, shardOf(id, DAY_PARTITIONS)),
                range: [`${id}#${from}`, `${id}#${to}#\uffff`],
              }))
            : // Every broadcast of the month: its sk begins with the broadcast, not the day.
              Array.from({ length: DAY_PARTITIONS }, (_, partition) => ({
                pk: keys.metricsBroadcastDays(month, partition),
                range: undefined,
              })),
      );
      const pages = await inParallel(queries, PARALLEL_QUERIES, async ({ pk, range }) => {
        const items: Item[] = [];
        for await (const page of queryPages(this.db, {
          TableName: this.tableName,
          KeyConditionExpression: range ? 'pk = :pk AND sk BETWEEN :from AND :to' : 'pk = :pk',
          ExpressionAttributeValues: range
            ? { ':pk': pk, ':from': range[0], ':to': range[1] }
            : { ':pk': pk },
        }))
          items.push(...page);
        return items;
      });
      for (const item of pages.flat()) {
        const { day, domain, broadcastId } = daySkOf(String(item.sk), byBroadcast !== undefined);
        for (let h = 0; h < 24; h++) {
          const hourMs = day + h * HOUR_MS;
          const counts = item[`h${String(h).padStart(2, '0')}`];
          if (hourMs < fromHourMs || hourMs > lastRolled || !counts) continue;
          found.push({
            hourMs,
            domain,
            ...(broadcastId ? { broadcastId } : {}),
            counts: countsOf(counts as Item),
          });
        }
      }
    }
    // Not rolled up yet: the shards of each hour.
    const rawHours: number[] = [];
    for (let h = Math.max(fromHourMs, through); h <= toHourMs; h += HOUR_MS) rawHours.push(h);
    if (rawHours.length > MAX_RAW_HOURS) throw new MetricsBehindError(rawHours.length, MAX_RAW_HOURS);
    const wanted = byBroadcast?.ids ? new Set(byBroadcast.ids) : undefined;
    for (const [hourMs, sums] of await this.rawHours(rawHours)) {
      if (!byBroadcast) {
        for (const [domain, counts] of byDomain(sums)) found.push({ hourMs, domain, counts });
        continue;
      }
      for (const [sk, counts] of sums) {
        const { domain, broadcastId } = splitSk(sk);
        if (broadcastId && (!wanted || wanted.has(broadcastId)))
          found.push({ hourMs, domain, broadcastId, counts });
      }
    }
    return found;
  }

  async rollUp(nowMs: number): Promise<{ hours: number }> {
    let through = await this.rolledThrough();
    let rolled = 0;
    while (through + HOUR_MS + ROLL_UP_GRACE_MS <= nowMs && rolled < MAX_ROLLED_PER_RUN) {
      const hourMs = through;
      const sums = (await this.rawHours([hourMs])).get(hourMs) as Map<string, MetricCounts>;
      // Each domain's sum (its emails, broadcast or not) into its day item; each broadcast's into its own.
      const writes: [Item, MetricCounts][] = [...byDomain(sums)].map(([domain, counts]) => [
        {
          pk: keys.metricsDays(monthText(hourMs), shardOf(domain, DAY_PARTITIONS)),
          sk: keys.metricsDaySk(dayText(hourMs), domain),
        },
        counts,
      ]);
      for (const [sk, counts] of sums) {
        const { domain, broadcastId } = splitSk(sk);
        if (broadcastId)
          writes.push([
            {
              pk: keys.metricsBroadcastDays(monthText(hourMs), shardOf(broadcastId, DAY_PARTITIONS)),
              sk: keys.metricsBroadcastDaySk(broadcastId, dayText(hourMs), domain),
            },
            counts,
          ]);
      }
      await inParallel(writes, PARALLEL_QUERIES, ([key, counts]) =>
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: 'SET #h = :counts, #ttl = :ttl',
            ExpressionAttributeNames: { '#h': hourAttr(hourMs), '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: {
              ':counts': counts,
              ':ttl': this.expiry(Math.floor(hourMs / DAY_MS) * DAY_MS + DAY_MS),
            },
          }),
        ),
      );
      // The mark moves only from where this run found it (two runs at once write the same sums).
      const moved = await writeIf(
        this.db,
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keys.metrics, sk: keys.metricsRolledSk },
          UpdateExpression: 'SET through = :next',
          ConditionExpression: 'attribute_not_exists(through) OR through = :prev',
          ExpressionAttributeValues: { ':next': hourMs + HOUR_MS, ':prev': hourMs },
        }),
      );
      if (!moved) break;
      through = hourMs + HOUR_MS;
      rolled++;
    }
    return { hours: rolled };
  }
}
