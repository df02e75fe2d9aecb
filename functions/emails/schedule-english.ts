import * as chrono from 'chrono-node/en';
import { instantIn, zoneOffsetMs } from '../shared/time-zones.js';

/**
 * Times in words (`in 1 hour`, `tomorrow at 9am ET`), read by chrono-node: a module of its own so
 * that it is loaded (schedule.ts, loadScheduleReader) only by a request that gives one.
 */

/** Words that may stand around a time without changing it ("at noon", "on Friday, 9am."). */
const FILLER = /\b(at|on)\b|[\s,.]/gi;

/**
 * Zone names whose offset depends on the day (daylight-saving time): chrono takes them, but works
 * out their offset for the wrong day when it moves a weekday a week on, so the offset is taken from
 * the IANA zone on the day the text names.
 */
const SEASONAL_ZONES: Record<string, string> = {
  ET: 'America/New_York',
  CT: 'America/Chicago',
  MT: 'America/Denver',
  PT: 'America/Los_Angeles',
  CET: 'Europe/Paris',
};

/** The offset from UTC (minutes) of an IANA zone at an instant. */
const offsetIn = (zone: string, at: number): number => zoneOffsetMs(at, zone) / 60_000;

/** The instant a wall-clock time (components as UTC fields) is in an IANA zone. */
const inZone = (wall: number, zone: string): Date => new Date(instantIn(wall, zone));

type ChronoResult = ReturnType<typeof chrono.parse>[number];

/** A result's date and time of day as it reads, as UTC fields (its own zone left aside). */
const wallClock = (result: ChronoResult) => {
  const c = result.start;
  return Date.UTC(
    c.get('year') ?? 0,
    (c.get('month') ?? 1) - 1,
    c.get('day') ?? 1,
    c.get('hour') ?? 0,
    c.get('minute') ?? 0,
    c.get('second') ?? 0,
    c.get('millisecond') ?? 0,
  );
};

export function fromEnglish(text: string, now: Date, refuse: (message: string) => never): Date {
  const read = (timezone: string | number) =>
    chrono.parse(text, { instant: now, timezone }, { forwardDate: true });
  let results = read('UTC');
  // A text that names its zone is read again on that zone's clock: "today", "tomorrow" and "Friday"
  // are its days (at 22:30 in New York, "tomorrow at 9am ET" is eleven hours away, not a day more).
  const named = results.length === 1 && results[0]?.start.isCertain('timezoneOffset');
  const seasonal = named ? /\b(ET|CT|MT|PT|CET)\b/.exec(results[0]?.text ?? '')?.[1] : undefined;
  const seasonalZone = seasonal ? SEASONAL_ZONES[seasonal] : undefined;
  if (named) {
    const offset = seasonalZone
      ? offsetIn(seasonalZone, now.getTime())
      : (results[0]?.start.get('timezoneOffset') ?? 0);
    results = read(offset);
  }
  const first = results[0];
  if (!first)
    return refuse(
      `is not a time this service can read (got "${text}"); use ISO 8601 (2026-12-01T09:00:00Z) or, for example, "in 1 hour" or "tomorrow at 9am"`,
    );
  if (results.length > 1)
    return refuse(
      `names more than one time (${results.map((r) => `"${r.text}" is ${r.start.date().toISOString()}`).join(', ')}); give one`,
    );
  // The zone's offset on the day the text names, not on the day chrono looked at first.
  const at = seasonalZone ? inZone(wallClock(first), seasonalZone) : first.start.date();
  const rest = (text.slice(0, first.index) + text.slice(first.index + first.text.length)).replace(FILLER, '');
  if (rest)
    return refuse(
      `was understood only in part: "${first.text}" is ${at.toISOString()}, but not "${rest}"; remove it or write the time in ISO 8601`,
    );
  // "in 2 days" keeps the time of day; "tomorrow" or "Friday" alone would have to guess it.
  const relative = first.start.tags().has('result/relativeDate');
  if (!first.start.isCertain('hour') && !relative)
    return refuse(
      `names a day but no time of day ("${first.text}"); add one, for example "${first.text} at 9am"`,
    );
  // 3/4 is the 4th of March in the US and the 3rd of April in most other places: not guessed.
  const numeric = /\b(\d{1,2})[/.](\d{1,2})\b/.exec(first.text);
  if (numeric && Number(numeric[1]) <= 12 && Number(numeric[2]) <= 12)
    return refuse(
      `names a date that reads two ways ("${numeric[0]}": month/day or day/month); write the month's name or use ISO 8601`,
    );
  return at;
}
