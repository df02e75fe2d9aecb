import * as chrono from 'chrono-node/en';
import { type FieldError, validationError } from './errors.js';
import { MAX_SCHEDULE_DAYS } from './limits.js';
import type { DueJob, EmailState } from './ports.js';
import { instantIn, zoneOffsetMs } from './time-zones.js';

/**
 * Scheduled sending (`scheduled_at`), as Resend takes it: an ISO 8601 time, or English such as
 * `in 1 min`, `tomorrow at 9am`, `Friday at 3pm ET`, read relative to the request's time and in
 * UTC unless the text names a zone; at most 30 days ahead, never in the past.
 *
 * English is read by chrono-node (the English parser only: 47 KB minified), which knows relative
 * times, weekdays, and zone abbreviations with their daylight-saving rules (ET is EST or EDT on
 * that day). Whatever it cannot read whole is refused with what it did understand, never guessed.
 */
export const MAX_SCHEDULE_MS = MAX_SCHEDULE_DAYS * 24 * 3_600_000;

/**
 * How far ahead of a scheduled email's time it is put on the send queue, with a delay that makes
 * it visible at that time (SQS's DelaySeconds, at most 15 minutes): longer than the scheduler's
 * period (one minute on AWS), so an email is handed over on time however the runs fall.
 */
export const SCHEDULE_AHEAD_MS = 90_000;

/** SQS's longest message delay. */
export const MAX_QUEUE_DELAY_SECONDS = 900;

/** The queue delay that makes a message for an email due at `dueMs` visible no earlier than that. */
export const delaySecondsUntil = (dueMs: number, nowMs: number): number =>
  Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil((dueMs - nowMs) / 1000)));

const ISO = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;
/** Words that may stand around a time without changing it ("at noon", "on Friday, 9am."). */
const FILLER = /\b(at|on)\b|[\s,.]/gi;

/**
 * The time `text` names, as an ISO UTC string, relative to `now`; a 400 naming `field` when it
 * names none, more than one, only a day, a time in the past or one too far ahead.
 */
export function parseScheduledAt(text: string, now: Date, field = 'scheduled_at'): string {
  const refuse = (message: string): never => {
    const errors: FieldError[] = [{ field, message }];
    throw validationError(`Invalid request: ${field} ${message}`, errors);
  };
  const trimmed = text.trim();
  if (!trimmed) return refuse('must be a time: an ISO 8601 time or, for example, "in 1 hour"');
  if (trimmed.length > 200) return refuse('may be at most 200 characters');
  const at = ISO.test(trimmed) ? fromIso(trimmed, refuse) : fromEnglish(trimmed, now, refuse);
  if (Number.isNaN(at.getTime())) return refuse(`is not a valid time (got "${trimmed}")`);
  const understood = `"${trimmed}" is ${at.toISOString()}`;
  if (at.getTime() < now.getTime())
    return refuse(`is in the past: ${understood}, and it is now ${now.toISOString()}`);
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_MS)
    return refuse(
      `may be at most ${MAX_SCHEDULE_DAYS} days ahead (until ${new Date(now.getTime() + MAX_SCHEDULE_MS).toISOString()}): ${understood}`,
    );
  return at.toISOString();
}

/** An ISO 8601 time with its zone (`Z` or an offset); NaN for a day that does not exist. */
function fromIso(text: string, refuse: (message: string) => never): Date {
  const normal = text.replace(' ', 'T').toUpperCase();
  // A time without a zone (an HTML datetime-local value, say) would be hours off for most senders
  // if it were taken as UTC: it is refused instead of guessed.
  if (!/([Z]|[+-]\d{2}(:?\d{2})?)$/.test(normal.slice(10)))
    return refuse(
      `names no time zone (got "${text}"): add Z for UTC or an offset, for example "${normal}Z" or "${normal}+02:00"`,
    );
  // "+02" and "+0200" as "+02:00", the forms Date.parse is sure to take.
  const fixed = normal.replace(/([+-]\d{2})(\d{2})?$/, (_, h: string, m?: string) => `${h}:${m ?? '00'}`);
  const date = new Date(fixed);
  // Date rolls 2026-02-30 over to March: a day that does not exist is refused instead.
  const [, y, mo, d] = /^(\d{4})-(\d{2})-(\d{2})/.exec(normal) ?? [];
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (probe.getUTCMonth() !== Number(mo) - 1 || probe.getUTCDate() !== Number(d)) return new Date(Number.NaN);
  return date;
}

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

function fromEnglish(text: string, now: Date, refuse: (message: string) => never): Date {
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

/** A scheduled email's queue message: a reference, with its key, held until its time. */
export const dueJob = (state: Pick<EmailState, 'id' | 'key_id' | 'scheduled_at'>, now: number): DueJob => ({
  id: state.id,
  content: null,
  ...(state.key_id ? { key_id: state.key_id } : {}),
  delaySeconds: state.scheduled_at ? delaySecondsUntil(Date.parse(state.scheduled_at), now) : 0,
});
