import type { AuthenticationResult, ReceivedEmail, ScanVerdict } from './model.js';

/**
 * SES's receipt event (what a receipt rule's Lambda action hands the function, and what the local
 * SMTP twin builds alike), in the service's terms. The shape is SES's documented one ("Sample
 * incoming email event", SES developer guide; @types/aws-lambda's SESEvent): one record per
 * message, the message's `mail` (its id, the envelope, the first headers) and its `receipt` (the
 * envelope recipients this rule matched and SES's verdicts). Only what the parser needs is typed
 * here, so the core reads no AWS type; the body is not in the event (SES's S3 action wrote it).
 */
export interface SesReceiptEvent {
  Records: SesReceiptRecord[];
}

export interface SesReceiptRecord {
  eventSource?: string;
  ses: {
    mail: { messageId: string; timestamp: string; source?: string; destination?: string[] };
    receipt: {
      timestamp?: string;
      recipients?: string[];
      spfVerdict?: { status?: string };
      dkimVerdict?: { status?: string };
      dmarcVerdict?: { status?: string };
      spamVerdict?: { status?: string };
      virusVerdict?: { status?: string };
    };
  };
}

/** One message SES accepted, as the parser takes it (receive.ts). */
export interface Receipt {
  /** SES's message id: the raw object's key (model.ts rawKey) and the received email's claim. */
  sesMessageId: string;
  /** When SES received it (mail.timestamp; the received email's created_at). */
  receivedAt: string;
  /** The envelope sender (mail.source): `from` where the message has no From header. */
  envelopeFrom?: string;
  /** The envelope recipients the rule matched (receipt.recipients): `received_for`. */
  recipients: string[];
  authentication: ReceivedEmail['authentication'];
  spam: ScanVerdict;
  virus: ScanVerdict;
}

/**
 * SES's SPF, DKIM and DMARC verdicts (PASS, FAIL, GRAY, PROCESSING_FAILED) as Resend's
 * `authentication` values; DISABLED (the check was off), an unknown value or none at all (the local
 * twin leaves out what it cannot check) is `unknown`.
 */
export function authenticationOf(status: string | undefined): AuthenticationResult {
  switch (status) {
    case 'PASS':
      return 'pass';
    case 'FAIL':
      return 'fail';
    case 'GRAY':
      return 'gray';
    case 'PROCESSING_FAILED':
      return 'processing_failed';
    default:
      return 'unknown';
  }
}

/** SES's spam and virus verdicts as given (DISABLED too: the rule's scanning was off); none: `unknown`. */
export function scanVerdictOf(status: string | undefined): ScanVerdict {
  switch (status) {
    case 'PASS':
    case 'FAIL':
    case 'GRAY':
    case 'PROCESSING_FAILED':
    case 'DISABLED':
      return status.toLowerCase() as ScanVerdict;
    default:
      return 'unknown';
  }
}

/** One record of the event in the service's terms. */
export function receiptOf(record: SesReceiptRecord): Receipt {
  const { mail, receipt } = record.ses;
  return {
    sesMessageId: mail.messageId,
    ...(mail.source ? { envelopeFrom: mail.source } : {}),
    receivedAt: new Date(Date.parse(receipt.timestamp ?? mail.timestamp) || Date.now()).toISOString(),
    recipients: [...(receipt.recipients ?? mail.destination ?? [])],
    authentication: {
      spf: authenticationOf(receipt.spfVerdict?.status),
      dkim: authenticationOf(receipt.dkimVerdict?.status),
      dmarc: authenticationOf(receipt.dmarcVerdict?.status),
    },
    spam: scanVerdictOf(receipt.spamVerdict?.status),
    virus: scanVerdictOf(receipt.virusVerdict?.status),
  };
}

/** Every message of an event (SES sends one a record; a record that is not SES's is refused). */
export function receiptsOf(event: SesReceiptEvent): Receipt[] {
  if (!event || !Array.isArray(event.Records)) throw new Error('not an SES receipt event: no Records');
  return event.Records.map((record) => {
    if (!record?.ses?.mail?.messageId)
      throw new Error('not an SES receipt event: a record has no mail.messageId');
    return receiptOf(record);
  });
}

/**
 * A Lambda asynchronous invocation's failure record, as an onFailure destination (the failure
 * queue) receives it: `requestPayload` is the event the function failed on. Null when the body is
 * not one (nothing to do with it but drop it).
 */
export function failedReceiptEvent(body: string): SesReceiptEvent | null {
  try {
    const record = JSON.parse(body) as { requestPayload?: SesReceiptEvent };
    const payload = record.requestPayload;
    return payload && Array.isArray(payload.Records) ? payload : null;
  } catch {
    return null;
  }
}
