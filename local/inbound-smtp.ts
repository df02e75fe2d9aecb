import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { SESMail, SESMailCommonHeaders, SESMailHeader, SESReceipt } from 'aws-lambda';
import { decodeWords } from 'postal-mime';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { inboundSmtpHost, MAX_RECEIVED_MESSAGE_BYTES } from '../functions/domains/receiving-regions.js';
import { rawKey } from '../functions/receiving/model.js';

/**
 * The local twin of SES's inbound SMTP endpoint (`inbound-smtp.<region>.amazonaws.com`), on
 * 127.0.0.1: what SES does with a message for a domain that receives, as our receipt rule's two
 * actions make it do on AWS.
 *
 * - It takes a recipient only where the local SES's active receipt rule set does
 *   (`acceptsRecipient`); any other gets `550 5.1.1`, during the SMTP conversation, as SES refuses
 *   mail no rule of its active set matches.
 * - It holds SES's limit on a received message (40 MB, headers included): advertised with SIZE, a
 *   `MAIL FROM` declaring more refused with 552, and a DATA that goes past it refused with 552 too.
 * - It writes the message, with the `Return-Path` and `Received` headers SES puts on top, to the
 *   content bucket at `received/raw/<SES message id>` (the S3 action), and answers 250 only once
 *   that is stored; then it invokes `receive-email` with SES's receipt event for a Lambda action
 *   (the Lambda action, InvocationType `Event`: the 250 does not wait for the function, and a
 *   function that fails leaves the raw message for the sweep, as on AWS).
 *
 * SES's verdicts (spam, virus, SPF, DKIM, DMARC) cannot be computed offline: the receipt event
 * leaves them out (and the raw message has no `X-SES-*-Verdict` or `Authentication-Results`
 * headers), so a received email shows them `unknown`. There is no STARTTLS (the rule's TLS policy is
 * Optional) and no AUTH (SES's inbound endpoint takes none).
 */

/** SES's receipt for a Lambda action, without the verdicts the local twin cannot compute. */
export type LocalReceipt = Omit<
  SESReceipt,
  'spamVerdict' | 'virusVerdict' | 'spfVerdict' | 'dkimVerdict' | 'dmarcVerdict'
> &
  Partial<Pick<SESReceipt, 'spamVerdict' | 'virusVerdict' | 'spfVerdict' | 'dkimVerdict' | 'dmarcVerdict'>>;

/** SES's receipt event for a Lambda action (its documented shape; @types/aws-lambda SESEvent), verdicts left out. */
export interface LocalReceiptEvent {
  Records: { eventSource: 'aws:ses'; eventVersion: '1.0'; ses: { mail: SESMail; receipt: LocalReceipt } }[];
}

export interface InboundSmtpOptions {
  /** 0: any free port. */
  port: number;
  /** The port was chosen (INBOUND_SMTP_PORT): fail when it is taken instead of using another. */
  portRequired?: boolean;
  region: string;
  /** The function our rule's Lambda action names (receive-email's ARN). */
  functionArn: string;
  /** Whether the local SES's active receipt rule set takes mail for this address (local/ses-receipt-rules.ts). */
  acceptsRecipient(address: string): boolean | Promise<boolean>;
  /** Writes an object to the content bucket, as SES's S3 action does. */
  storeRaw(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * Hands the receipt event to receive-email as an asynchronous (Event) invocation: Lambda's retries
   * and its failure destination are the invoker's.
   */
  invoke(event: LocalReceiptEvent): Promise<void>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface InboundSmtp {
  port: number;
  /** Set when the port asked for was taken and another was used instead. */
  portTaken?: number;
  /** Resolves once every invocation started so far has ended. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** SES's words for a recipient no rule of the active set matches (smtp-server puts 5.1.1 before them). */
export const RECIPIENT_REFUSED = 'Requested action not taken: mailbox unavailable';

/** A message id shaped like SES's inbound ones (and so the raw object's key): 40 lower-case letters and digits. */
export const sesMessageId = (): string => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(40)].map((byte) => alphabet[byte % alphabet.length]).join('');
};

const smtpError = (responseCode: number, message: string) =>
  Object.assign(new Error(message), { responseCode });

/** An RFC 5322 date as SES writes it in its Received header: `Mon, 05 Aug 2019 21:30:02 +0000 (UTC)`. */
const mailDate = (at: Date) => at.toUTCString().replace(/GMT$/, '+0000 (UTC)');

/** The header section of a message, unfolded, in order (names as written). */
export function headersOf(raw: Uint8Array): SESMailHeader[] {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const end = [crlf, lf].filter((at) => at >= 0).sort((a, b) => a - b)[0] ?? bytes.length;
  const headers: SESMailHeader[] = [];
  for (const line of bytes.subarray(0, end).toString('utf8').split(/\r?\n/)) {
    const last = headers.at(-1);
    if (/^[ \t]/.test(line) && last) last.value += ` ${line.trim()}`;
    else {
      const colon = line.indexOf(':');
      if (colon > 0) headers.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
    }
  }
  return headers;
}

/** An address list header split into its addresses as written (commas in quotes or angle brackets kept). */
export function addressList(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  let angle = 0;
  for (const char of value) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === '<') angle++;
    else if (!quoted && char === '>') angle = Math.max(0, angle - 1);
    if (char === ',' && !quoted && angle === 0) {
      if (current.trim()) out.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** SES's commonHeaders: the usual headers, address lists split, the subject decoded; absent ones left out. */
function commonHeaders(headers: SESMailHeader[], returnPath: string): SESMailCommonHeaders {
  const first = (name: string) => headers.find((h) => h.name.toLowerCase() === name)?.value;
  const list = (name: string) => {
    const values = headers.filter((h) => h.name.toLowerCase() === name).flatMap((h) => addressList(h.value));
    return values.length ? values : undefined;
  };
  const fields: Record<string, unknown> = {
    returnPath,
    from: list('from'),
    date: first('date'),
    to: list('to'),
    cc: list('cc'),
    bcc: list('bcc'),
    sender: list('sender'),
    replyTo: list('reply-to'),
    messageId: first('message-id'),
    subject: first('subject') === undefined ? undefined : decodeWords(first('subject') as string),
  };
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as unknown as SESMailCommonHeaders;
}

/** SES's receipt event for one message our rule's Lambda action hands over (verdicts left out). */
export function receiptEvent(input: {
  messageId: string;
  source: string;
  recipients: string[];
  raw: Uint8Array;
  receivedAt: Date;
  processingTimeMillis: number;
  functionArn: string;
}): LocalReceiptEvent {
  const headers = headersOf(input.raw);
  const timestamp = input.receivedAt.toISOString();
  return {
    Records: [
      {
        eventSource: 'aws:ses',
        eventVersion: '1.0',
        ses: {
          mail: {
            timestamp,
            source: input.source,
            messageId: input.messageId,
            destination: input.recipients,
            headersTruncated: false,
            headers,
            commonHeaders: commonHeaders(headers, input.source),
          },
          receipt: {
            timestamp,
            processingTimeMillis: input.processingTimeMillis,
            recipients: input.recipients,
            action: { type: 'Lambda', functionArn: input.functionArn, invocationType: 'Event' },
          },
        },
      },
    ],
  };
}

/** Reads a DATA stream, keeping at most `max` bytes (past it the message is refused, so the rest is dropped). */
const readData = (stream: SMTPServerDataStream, max: number) =>
  new Promise<Buffer | null>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= max) chunks.push(chunk);
      else chunks.length = 0;
    });
    stream.on('end', () => resolve(stream.sizeExceeded || bytes > max ? null : Buffer.concat(chunks)));
    stream.on('error', reject);
  });

export async function startInboundSmtp(options: InboundSmtpOptions): Promise<InboundSmtp> {
  const host = inboundSmtpHost(options.region);
  const pending = new Set<Promise<void>>();
  const log = options.log ?? (() => undefined);

  const received = async (stream: SMTPServerDataStream, session: SMTPServerSession) => {
    const message = await readData(stream, MAX_RECEIVED_MESSAGE_BYTES);
    // smtp-server answers 552 itself for a message over `size` (rejectOversized).
    if (!message) throw smtpError(552, 'Message size exceeds fixed maximum message size');
    const started = Date.now();
    const receivedAt = new Date();
    const messageId = sesMessageId();
    const source = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const recipients = session.envelope.rcptTo.map((r) => r.address);
    // What SES puts on top of the message it writes to S3 (its verdict headers aside).
    const trace =
      `Return-Path: <${source}>\r\n` +
      `Received: from ${session.hostNameAppearsAs || 'unknown'} (${session.clientHostname} [${session.remoteAddress}])\r\n` +
      ` by ${host} with SMTP id ${messageId}\r\n for ${recipients[0]};\r\n ${mailDate(receivedAt)}\r\n`;
    const raw = Buffer.concat([Buffer.from(trace), message]);
    try {
      await options.storeRaw(rawKey(messageId), raw);
    } catch (error) {
      log('the local SES could not store a received message', { error: String(error) });
      throw smtpError(451, 'Requested action aborted: local error in processing');
    }
    const event = receiptEvent({
      messageId,
      source,
      recipients,
      raw,
      receivedAt,
      processingTimeMillis: Date.now() - started,
      functionArn: options.functionArn,
    });
    // The Lambda action, asynchronous: SES has accepted the message whatever the function does.
    const invocation = options
      .invoke(event)
      .catch((error) => log('receive-email was not invoked', { messageId, error: String(error) }))
      .finally(() => pending.delete(invocation));
    pending.add(invocation);
    return messageId;
  };

  const server = new SMTPServer({
    name: host,
    size: MAX_RECEIVED_MESSAGE_BYTES,
    rejectOversized: true,
    // Enhanced status codes, as SES gives them (`550 5.1.1`, `552 5.3.4`).
    hideENHANCEDSTATUSCODES: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    closeTimeout: 1_000,
    onRcptTo(address, _session, callback) {
      Promise.resolve(options.acceptsRecipient(address.address)).then(
        (accepted) => callback(accepted ? null : smtpError(550, RECIPIENT_REFUSED)),
        (error) => {
          log('the local SES could not check a recipient', { error: String(error) });
          callback(smtpError(451, 'Requested action aborted: local error in processing'));
        },
      );
    },
    onData(stream, session, callback) {
      received(stream, session).then(
        (messageId) => callback(null, `Ok ${messageId}`),
        (error: Error) => callback(error),
      );
    },
  });
  server.on('error', (error) => log('inbound SMTP error', { error: String(error) }));

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      server.server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        server.server.off('error', fail);
        resolve((server.server.address() as AddressInfo).port);
      });
    });

  let portTaken: number | undefined;
  let port: number;
  try {
    port = await listen(options.port);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code !== 'EADDRINUSE' || options.portRequired)
      throw Object.assign(error as Error, { port: options.port });
    portTaken = options.port;
    port = await listen(0);
  }

  const idle = async () => {
    while (pending.size) await Promise.all([...pending]);
  };
  return {
    port,
    ...(portTaken === undefined ? {} : { portTaken }),
    idle,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await idle();
    },
  };
}
