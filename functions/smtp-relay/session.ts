import { decodeWords } from 'postal-mime';
import type { ApiKey } from '../api-keys/model.js';
import { rateLimitExceeded } from '../api-keys/rate-limit.js';
import {
  bodyForLog,
  headerForLog,
  LOG_USER_AGENT_MAX_BYTES,
  logIdOf,
  type RequestLogEntry,
} from '../request-logs/model.js';
import { ApiError, type ErrorBody } from '../shared/errors.js';
import { SMTP_MAX_MESSAGE_BYTES, SMTP_MAX_RECIPIENTS, SMTP_USERNAME } from './settings.js';

/**
 * The SMTP relay's rules apart from sockets (issue 42): what a session may do, and what each of
 * our answers becomes in SMTP. relay.ts applies them to smtp-server's sessions.
 */

/** The bounds that keep a port open to the internet from holding a task or burning the key table's reads. */
export interface RelayLimits {
  /** Largest message (SIZE, advertised; a MAIL FROM declaring more and a DATA running past it: 552 5.3.4). */
  maxMessageBytes: number;
  /** Recipients a message may have: the next RCPT TO answers 452 4.5.3. */
  maxRecipients: number;
  /** Connections one client address may hold at once; the next is answered 421 4.7.0. */
  maxConnectionsPerAddress: number;
  /** Connections a relay holds at once, all addresses together. */
  maxConnections: number;
  /** Failed AUTH attempts a client address may make in `failedAuthWindowMs`; then 421 4.7.0 until it ends. */
  maxFailedAuth: number;
  failedAuthWindowMs: number;
  /** Silence from a client that owes us input, then 421 4.4.2. */
  idleTimeoutMs: number;
  /** The longest a client may take to complete one command line (bytes trickled in do not extend it). */
  commandTimeoutMs: number;
  /** The longest a message's DATA may take to arrive, then 421 4.4.2 and nothing is kept. */
  dataTimeoutMs: number;
  /** The longest the PROXY protocol header or the TLS handshake may take after a connection opens. */
  handshakeTimeoutMs: number;
  /**
   * Bytes of messages being received a relay holds at once (all sessions): a message that would
   * pass it is answered 452 4.3.1 and tried again by its client (front.ts DataBudget). One client
   * address may hold a quarter of it, so one client sending large messages at once cannot fill it.
   */
  maxBufferedBytes: number;
}

export const DEFAULT_LIMITS: RelayLimits = {
  maxMessageBytes: SMTP_MAX_MESSAGE_BYTES,
  maxRecipients: SMTP_MAX_RECIPIENTS,
  maxConnectionsPerAddress: 20,
  maxConnections: 2_000,
  maxFailedAuth: 5,
  failedAuthWindowMs: 5 * 60_000,
  idleTimeoutMs: 60_000,
  commandTimeoutMs: 120_000,
  dataTimeoutMs: 10 * 60_000,
  handshakeTimeoutMs: 10_000,
  // A quarter of the task's 1 GB: each held byte is copied once more and parsed (about 3 in all).
  maxBufferedBytes: 256 * 1024 * 1024,
};

/** One SMTP answer: its code, its enhanced status code (RFC 3463) and its words. */
export interface SmtpReply {
  code: number;
  enhanced: string;
  text: string;
}

/** An answer as smtp-server takes it from a handler (the enhanced code leads the message: relay.ts sends it as is). */
export const replyError = (reply: SmtpReply): Error & { responseCode: number } =>
  Object.assign(new Error(`${reply.enhanced} ${reply.text}`), { responseCode: reply.code });

/** A message starting with an enhanced status code: ours, sent without smtp-server adding one of its own. */
export const HAS_ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3} /;

export const REPLIES = {
  badKey: {
    code: 535,
    enhanced: '5.7.8',
    text: `Authentication failed: the username is ${SMTP_USERNAME} and the password one of this service's API keys`,
  },
  tooManyFailures: {
    code: 421,
    enhanced: '4.7.0',
    text: 'Too many failed logins from your address; try again later',
  },
  tooManyConnections: {
    code: 421,
    enhanced: '4.7.0',
    text: 'Too many connections from your address; try again later',
  },
  tooManyRecipients: (max: number): SmtpReply => ({
    code: 452,
    enhanced: '4.5.3',
    text: `Too many recipients: a message may have ${max}; send the others in another message`,
  }),
  tooLarge: (max: number): SmtpReply => ({
    code: 552,
    enhanced: '5.3.4',
    text: `Message too large: the limit is ${max} bytes`,
  }),
  shuttingDown: { code: 421, enhanced: '4.3.2', text: 'Service shutting down; try again in a moment' },
  authUnavailable: { code: 454, enhanced: '4.7.0', text: 'Temporary authentication failure; try again' },
  failed: { code: 451, enhanced: '4.3.0', text: 'Temporary failure; nothing was kept, try again' },
  busy: {
    code: 452,
    enhanced: '4.3.1',
    text: 'Insufficient system resources: too many large messages at once here; nothing was kept, try again',
  },
  dataTimeout: {
    code: 421,
    enhanced: '4.4.2',
    text: 'The message took too long to arrive; nothing was kept',
  },
  commandTimeout: { code: 421, enhanced: '4.4.2', text: 'Command timeout; closing the connection' },
} satisfies Record<string, SmtpReply | ((max: number) => SmtpReply)>;

/** The AUTH username apps give (Resend's `resend`), in any case. */
export const isRelayUsername = (username: string | undefined) =>
  (username ?? '').toLowerCase() === SMTP_USERNAME;

/**
 * Failed AUTH attempts per client address: past `max` in a window of `windowMs`, the address is
 * refused (421 4.7.0, connection closed) without a key lookup until the window ends. Kept in the
 * relay's memory (per task): a bound on what one address costs, not an account lockout.
 */
export class AuthLimiter {
  private readonly failures = new Map<string, { since: number; count: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  blocked(address: string, nowMs: number): boolean {
    const entry = this.failures.get(address);
    if (!entry) return false;
    if (nowMs - entry.since >= this.windowMs) {
      this.failures.delete(address);
      return false;
    }
    return entry.count >= this.max;
  }

  /** Counts a failure; true when the address is now refused. */
  failed(address: string, nowMs: number): boolean {
    let entry = this.failures.get(address);
    if (!entry || nowMs - entry.since >= this.windowMs) {
      // Bounded: the oldest entries go first (a Map keeps insertion order), so a spray from many
      // addresses cannot wipe the counts of the address being refused.
      if (this.failures.size >= 100_000)
        for (const oldest of [...this.failures.keys()].slice(0, 10_000)) this.failures.delete(oldest);
      entry = { since: nowMs, count: 0 };
      this.failures.set(address, entry);
    }
    entry.count++;
    return entry.count >= this.max;
  }
}

/** The 51st RCPT TO (and on): refused, unless it repeats an address already taken. */
export function recipientRefusal(taken: readonly string[], address: string, max: number): SmtpReply | null {
  if (taken.length < max) return null;
  const repeat = taken.some((a) => a.toLowerCase() === address.toLowerCase());
  return repeat ? null : REPLIES.tooManyRecipients(max);
}

/** The rate answer: 451 4.7.1 with the seconds until the key's window ends. */
export function rateReply(state: { limit: number; resetSeconds: number }): SmtpReply {
  return {
    code: 451,
    enhanced: '4.7.1',
    text: `Rate limit: this API key may send ${state.limit} messages a second; try again in ${state.resetSeconds} s`,
  };
}

/** What a refused step means in the request log: the HTTP status and error body the API would have answered. */
export interface Outcome {
  reply: SmtpReply;
  status: number;
  body: ErrorBody;
}

/**
 * An error of our pipeline (the ApiError acceptMime, the key lookup or the sender check throw) as
 * an SMTP answer that says why. A failure of ours (a 5xx, anything unexpected) is never a 5xx in
 * SMTP: it is 451 4.3.0, and the client tries again (nothing was kept, so no second email).
 */
export function outcomeOf(error: unknown): Outcome {
  if (!(error instanceof ApiError)) {
    return {
      reply: REPLIES.failed,
      status: 500,
      body: { statusCode: 500, name: 'internal_server_error', message: 'An unexpected error occurred.' },
    };
  }
  const body = error.toBody();
  const reply = (code: number, enhanced: string, text = error.message): Outcome => ({
    reply: { code, enhanced, text },
    status: error.statusCode,
    body,
  });
  if (error.statusCode === 401) return { ...reply(535, '5.7.8'), reply: REPLIES.badKey };
  if (error.statusCode === 403) return reply(550, '5.7.1');
  if (error.statusCode === 413) return reply(552, '5.3.4');
  if (error.statusCode === 429) {
    const seconds = Number(error.headers?.['retry-after'] ?? 1);
    return reply(451, '4.7.1', `${error.message.replace(/\.?$/, '')}; try again in ${seconds} s`);
  }
  if (error.errorName === 'concurrent_idempotent_requests') return reply(451, '4.3.0');
  if (error.errorName === 'invalid_idempotent_request') return reply(554, '5.7.0');
  if (error.statusCode >= 500) return { ...reply(451, '4.3.0'), reply: REPLIES.failed };
  // The sender's domain (MAIL FROM's, or the From header's) is not one this service may send from.
  if (error.fieldErrors?.some((f) => f.field === 'from')) return reply(550, '5.7.1');
  return reply(554, '5.6.0');
}

/** The outcome of a spent rate, for the log and the answer. */
export function rateOutcome(state: {
  limit: number;
  resetSeconds: number;
  remaining: number;
  allowed: boolean;
}) {
  const error = rateLimitExceeded(state);
  return { reply: rateReply(state), status: 429, body: error.toBody() } satisfies Outcome;
}

/** The outcome of a message over the limit. */
export const tooLargeOutcome = (max: number): Outcome => ({
  reply: REPLIES.tooLarge(max),
  status: 413,
  body: { statusCode: 413, name: 'payload_too_large', message: REPLIES.tooLarge(max).text },
});

/** The outcome of a message cut short by shutting down or by the DATA bound. */
export const abortedOutcome = (reply: SmtpReply): Outcome => ({
  reply,
  status: 503,
  body: { statusCode: 503, name: 'service_unavailable', message: reply.text },
});

/** The header section's fields a log names: unfolded, the first of each. */
export function headerFields(raw: Uint8Array, names: readonly string[]): Record<string, string> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const end = [bytes.indexOf('\r\n\r\n'), bytes.indexOf('\n\n')].filter((at) => at >= 0);
  const head = bytes.subarray(0, Math.min(end.length ? Math.min(...end) : bytes.length, 256 * 1024));
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  const found: Record<string, string> = {};
  let current: string | undefined;
  for (const line of head.toString('utf8').split(/\r?\n/)) {
    if (/^[ \t]/.test(line)) {
      if (current) found[current] += ` ${line.trim()}`;
      continue;
    }
    current = undefined;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (wanted.has(name) && found[name] === undefined) {
      found[name] = line.slice(colon + 1).trim();
      current = name;
    }
  }
  return found;
}

/** What a message's request log keeps of it: its envelope and a few headers, never its content. */
export function messageSummary(
  raw: Uint8Array | undefined,
  envelope: { mailFrom: string; recipients: readonly string[] },
) {
  const headers = raw ? headerFields(raw, ['message-id', 'subject', 'from']) : {};
  const subject =
    headers.subject === undefined ? undefined : safely(() => decodeWords(headers.subject as string));
  return {
    mail_from: envelope.mailFrom,
    rcpt_to: [...envelope.recipients],
    ...(raw ? { size: raw.byteLength } : {}),
    ...(headers['message-id'] ? { message_id: headers['message-id'].replace(/^<|>$/g, '') } : {}),
    ...(headers.from ? { from: headers.from } : {}),
    ...(subject === undefined ? {} : { subject }),
  };
}

const safely = (decode: () => string): string | undefined => {
  try {
    return decode();
  } catch {
    return undefined;
  }
};

/** The client as the request log's user agent names it: SMTP, the transmission type, its EHLO name. */
export const smtpUserAgent = (transmission: string, ehlo: string | false | undefined) =>
  headerForLog(`SMTP ${transmission || 'ESMTP'}${ehlo ? ` (EHLO ${ehlo})` : ''}`, LOG_USER_AGENT_MAX_BYTES);

/**
 * One message's request-log entry, as the API's middleware makes one per request
 * (http/request-log.ts): POST /smtp, the HTTP status the API would have answered, the envelope and
 * a few headers as the request body, `{id}` or the error as the response body.
 */
export function requestLogEntry(input: {
  requestId: string;
  atMs: number;
  durationMs: number;
  userAgent: string;
  apiKey: Pick<ApiKey, 'id'> | undefined;
  summary: ReturnType<typeof messageSummary>;
  status: number;
  response: unknown;
  bodies: boolean;
}): RequestLogEntry {
  return {
    id: logIdOf(input.requestId, input.atMs),
    created_at: new Date(input.atMs).toISOString(),
    method: 'POST',
    endpoint: '/smtp',
    response_status: input.status,
    user_agent: input.userAgent,
    api_key_id: input.apiKey?.id ?? null,
    duration_ms: Math.round(input.durationMs * 100) / 100,
    request_body: input.bodies ? bodyForLog(input.summary) : null,
    response_body: input.bodies ? bodyForLog(input.response) : null,
  };
}
