import { type FieldError, validationError } from '../shared/errors.js';
import { MAX_SCHEDULE_DAYS } from '../shared/limits.js';
import type { DueJob, EmailState } from './ports.js';

/**
 * Scheduled sending (`scheduled_at`), as Resend takes it: an ISO 8601 time, or English such as
 * `in 1 min`, `tomorrow at 9am`, `Friday at 3pm ET`, read relative to the request's time and in
 * UTC unless the text names a zone; at most 30 days ahead, never in the past.
 *
 * English is read by chrono-node (schedule-english.ts: the English parser only, 47 KB minified, loaded
 * only for a time given in words: see loadScheduleReader), which knows relative
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

export const ISO_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;

type EnglishReader = (text: string, now: Date, refuse: (message: string) => never) => Date;
let english: EnglishReader | undefined;

/**
 * Loads the reader of times in words (chrono-node) if one of these texts needs it: a request whose
 * times are ISO 8601, or absent, loads nothing. Called before parseScheduledAt, which is synchronous.
 */
export async function loadScheduleReader(...texts: unknown[]): Promise<void> {
  if (english) return;
  if (texts.some((text) => typeof text === 'string' && text.trim() && !ISO_TIME.test(text.trim())))
    english = (await import('./schedule-english.js')).fromEnglish;
}

const readEnglish: EnglishReader = (text, now, refuse) => {
  // A caller that forgot loadScheduleReader: a fault of the service (a 500), never a refusal.
  if (!english) throw new Error('a time in words was read before loadScheduleReader loaded its reader');
  return english(text, now, refuse);
};

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
  const at = ISO_TIME.test(trimmed) ? fromIso(trimmed, refuse) : readEnglish(trimmed, now, refuse);
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

/** A scheduled email's queue message: a reference, with its key, held until its time. */
export const dueJob = (state: Pick<EmailState, 'id' | 'key_id' | 'scheduled_at'>, now: number): DueJob => ({
  id: state.id,
  content: null,
  ...(state.key_id ? { key_id: state.key_id } : {}),
  delaySeconds: state.scheduled_at ? delaySecondsUntil(Date.parse(state.scheduled_at), now) : 0,
});
