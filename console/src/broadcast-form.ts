import { MAX_SCHEDULE_DAYS } from '../../functions/shared/limits.js';
import type { Broadcast, BroadcastRecipientType, BroadcastStatus, BroadcastTotals } from './answers.js';

/**
 * The Broadcasts page's logic, apart from its markup (test/unit/console-broadcast-form.test.ts):
 * what the compose form sends, a schedule picked in the browser as the ISO time the API takes, what
 * each status and wait means in words, how far a send has come, and how often the page asks again.
 */

/** The compose form as typed: every field a string ('' for none). */
export interface BroadcastForm {
  name: string;
  segment_id: string;
  topic_id: string;
  from: string;
  subject: string;
  /** Addresses, separated by commas or new lines. */
  reply_to: string;
  preview_text: string;
  html: string;
  text: string;
}

export const emptyForm = (): BroadcastForm => ({
  name: '',
  segment_id: '',
  topic_id: '',
  from: '',
  subject: '',
  reply_to: '',
  preview_text: '',
  html: '',
  text: '',
});

/** A saved broadcast in the form (a draft being edited). */
export const formOf = (broadcast: Broadcast): BroadcastForm => ({
  name: broadcast.name ?? '',
  segment_id: broadcast.segment_id ?? broadcast.audience_id ?? '',
  topic_id: broadcast.topic_id ?? '',
  from: broadcast.from,
  subject: broadcast.subject,
  reply_to: (broadcast.reply_to ?? []).join(', '),
  preview_text: broadcast.preview_text ?? '',
  html: broadcast.html ?? '',
  text: broadcast.text ?? '',
});

/** The reply-to addresses typed, each trimmed, none empty. */
export const replyToOf = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((address) => address.trim())
    .filter(Boolean);

/** The fields whose value is kept as typed (the bodies' own whitespace is theirs). */
const AS_TYPED = new Set<keyof BroadcastForm>(['html', 'text']);

/** A field's value as sent: trimmed (but the bodies), '' for none. */
const sentValue = (form: BroadcastForm, field: keyof BroadcastForm) =>
  AS_TYPED.has(field) ? (form[field].trim() ? form[field] : '') : form[field].trim();

const FIELDS = [
  'name',
  'segment_id',
  'topic_id',
  'from',
  'subject',
  'preview_text',
  'html',
  'text',
] as const satisfies readonly (keyof BroadcastForm)[];

/** `POST /v1/broadcasts`'s body: a draft, with only the fields given (Resend's CreateBroadcastOptions). */
export function createBody(form: BroadcastForm): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const value = sentValue(form, field);
    if (value) body[field] = value;
  }
  const replyTo = replyToOf(form.reply_to);
  if (replyTo.length) body.reply_to = replyTo;
  return body;
}

/**
 * `PATCH /v1/broadcasts/{id}`'s body: the fields changed from the saved draft only, a field emptied
 * as null (the broadcast's "none", as the API answers it), the reply-to addresses as a list.
 */
export function updateBody(form: BroadcastForm, saved: Broadcast): Record<string, unknown> {
  const before = formOf(saved);
  const body: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const value = sentValue(form, field);
    if (value !== sentValue(before, field)) body[field] = value === '' ? null : value;
  }
  const replyTo = replyToOf(form.reply_to);
  if (replyTo.join('\n') !== replyToOf(before.reply_to).join('\n')) body.reply_to = replyTo;
  return body;
}

/** What the form lacks before it can be saved, in words (the API says the rest). */
export function problemsOf(form: BroadcastForm): string[] {
  const problems: string[] = [];
  if (!form.segment_id) problems.push('Choose the segment it goes to.');
  if (!form.from.trim()) problems.push('Say who it is from.');
  if (!form.subject.trim()) problems.push('Give it a subject.');
  if (!form.html.trim() && !form.text.trim()) problems.push('Write its HTML, its text, or both.');
  return problems;
}

export type Schedule = { iso: string; problem?: never } | { problem: string; iso?: never };

/**
 * A time picked in a `datetime-local` field (`2026-11-28T19:30`, the browser's own time zone) as
 * the ISO UTC time the API takes: the service refuses a time without a zone rather than guess it
 * (functions/emails/schedule.ts), so the console says which zone it meant. Refused here, in words,
 * when empty, not a time, in the past, or further ahead than a send may be scheduled.
 */
export function scheduleIso(local: string, now: Date): Schedule {
  const text = local.trim();
  if (!text) return { problem: 'Pick the date and time to send it at.' };
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text))
    return { problem: `"${text}" is not a date and time.` };
  const at = new Date(text);
  // A day that does not exist (the 30th of February) is not rolled into the next month.
  if (Number.isNaN(at.getTime()) || localInputOf(at) !== text.slice(0, 16))
    return { problem: `"${text}" is not a date and time.` };
  if (at.getTime() <= now.getTime()) return { problem: 'That time is past: pick a later one.' };
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_DAYS * 86_400_000)
    return { problem: `A broadcast may be scheduled at most ${MAX_SCHEDULE_DAYS} days ahead.` };
  return { iso: at.toISOString() };
}

/** A `datetime-local` value for a time (the browser's zone), to start the picker an hour from now. */
export function localInputOf(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** What each status means, for the person watching it (the service's statuses, each worded). */
export const STATUS_MEANS: Readonly<Record<BroadcastStatus, string>> = {
  draft: 'Not sent: it can be edited, previewed, sent or scheduled.',
  scheduled: 'To be sent at its scheduled time. Canceling it makes it a draft again; nothing is sent.',
  queued: 'Accepted for sending: its emails are about to be made.',
  sending: "Its contacts' emails are being made and handed to SES, behind transactional mail.",
  sent: "Every contact's email was made and handed to SES (or left out, with its reason).",
  canceled: 'Canceled: no email not yet handed to SES is sent.',
};

/** Why a queued or sending broadcast does not go on now, in words; '' when nothing holds it. */
export function waitingWords(waiting: Broadcast['waiting']): string {
  if (!waiting) return '';
  const detail = waiting.detail ? ` ${waiting.detail.replace(/\.?$/, '.')}` : '';
  if (waiting.reason === 'quota')
    return `Waiting for SES's 24-hour sending quota: it goes on by itself as the quota frees up.${detail}`;
  return `Waiting: sending is paused for the account, and it goes on once sending resumes.${detail}`;
}

/** Emails handed to SES or ended, of those made; what is left out, and whether every page is made. */
export interface Progress {
  created: number;
  /** Handed to SES (sent or suppressed by it) or ended without it: at most `created`. */
  handled: number;
  skipped: number;
  /** 0 to 100, of the emails made. */
  percent: number;
  done: boolean;
}

export function progressOf(broadcast: Broadcast): Progress {
  const created = broadcast.progress?.created ?? 0;
  const totals = broadcast.totals;
  const handled = Math.min(created, totals ? totals.sent + totals.suppressed + totals.ended : 0);
  const skipped = broadcast.progress
    ? broadcast.progress.skipped.unsubscribed + broadcast.progress.skipped.opted_out
    : 0;
  return {
    created,
    handled,
    skipped,
    percent: created ? Math.floor((handled * 100) / created) : 0,
    done: broadcast.progress?.done ?? false,
  };
}

const plural = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** How far a send has come, in one sentence. */
export function progressWords(broadcast: Broadcast): string {
  if (broadcast.status === 'draft' || broadcast.status === 'scheduled') return 'Not begun.';
  const p = progressOf(broadcast);
  const skipped = broadcast.progress?.skipped;
  const left =
    skipped && p.skipped
      ? ` ${plural(p.skipped, 'contact')} left out (${[
          skipped.unsubscribed && `${skipped.unsubscribed.toLocaleString('en')} unsubscribed`,
          skipped.opted_out && `${skipped.opted_out.toLocaleString('en')} opted out of the topic`,
        ]
          .filter(Boolean)
          .join(', ')}).`
      : '';
  if (!broadcast.progress) return `No email made yet.${left}`;
  const made = p.done
    ? `${plural(p.created, 'email')} made, one per contact`
    : `${plural(p.created, 'email')} made so far`;
  // Without totals (none counted yet, or not served) nothing is said of the handover.
  if (!broadcast.totals) return `${made}.${left}`;
  return `${made}; ${p.handled.toLocaleString('en')} handed to SES or ended.${left}`;
}

/** How often a broadcast's page asks again: often while it sends, now and then before, never after. */
export function refreshMsOf(status: BroadcastStatus | undefined): number | undefined {
  if (status === 'queued' || status === 'sending') return 3000;
  if (status === 'scheduled') return 15_000;
  return undefined;
}

/**
 * What canceling does, asked before it is done: a scheduled broadcast goes back to a draft (Resend's
 * changelog), a queued or sending one is canceled for good.
 */
export function cancelQuestion(status: BroadcastStatus): string {
  if (status === 'scheduled')
    return 'Cancel its schedule? It becomes a draft again: nothing is sent, and it can be changed and sent later.';
  return 'Cancel it? No email not yet handed to SES is sent; those already sent stay sent. It cannot be sent again: duplicate it instead.';
}

/** What may be done to a broadcast of this status (the API refuses the rest, 403). */
export function actionsOf(status: BroadcastStatus) {
  return {
    edit: status === 'draft',
    send: status === 'draft',
    cancel: status === 'scheduled' || status === 'queued' || status === 'sending',
    remove: status === 'draft' || status === 'scheduled',
    duplicate: true,
  };
}

/** The totals as the performance cards show them: each count, and its share of those delivered. */
export function totalsCards(totals: BroadcastTotals): { label: string; value: number; note: string }[] {
  const share = (n: number, of: number) =>
    of ? `${((n * 100) / of).toFixed(1)}% of ${of.toLocaleString('en')}` : '';
  return [
    { label: 'Sent', value: totals.sent, note: '' },
    { label: 'Delivered', value: totals.delivered, note: share(totals.delivered, totals.sent) },
    {
      label: 'Opened',
      value: totals.unique_opened,
      note: `${share(totals.unique_opened, totals.delivered) || 'unique'}; ${plural(totals.opened, 'open')} in all`,
    },
    {
      label: 'Clicked',
      value: totals.unique_clicked,
      note: `${share(totals.unique_clicked, totals.delivered) || 'unique'}; ${plural(totals.clicked, 'click')} in all`,
    },
    { label: 'Bounced', value: totals.bounced, note: share(totals.bounced, totals.sent) },
    { label: 'Complained', value: totals.complained, note: share(totals.complained, totals.delivered) },
    { label: 'Unsubscribed', value: totals.unsubscribed, note: 'through this broadcast' },
    { label: 'Suppressed', value: totals.suppressed, note: 'on the suppression list: not sent' },
  ];
}

/** The recipients list's columns for a type: what Resend gives for it beside the address, and when it first reached the type. */
export function recipientColumns(type: BroadcastRecipientType): string[] {
  if (type === 'opened') return ['Email', 'Opens', 'First'];
  if (type === 'clicked') return ['Email', 'Clicks', 'Links', 'First'];
  if (type === 'bounced') return ['Email', 'Bounce type', 'When'];
  return ['Email', 'When'];
}
