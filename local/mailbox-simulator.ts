import type { SesEvent } from '../functions/adapters/ses/events.js';

export interface TrackedLink {
  token: string;
  url: string;
  /** From the anchor's `ses:tags="name:value;…"`, as SES reports them in the Click event. */
  tags: Record<string, string[]>;
}

/** What tracking put in a message: its pixel's token (open tracking), its rewritten links (click tracking). */
export interface MessageTracking {
  open?: string;
  links: TrackedLink[];
}

/**
 * What SES's mailbox simulator does with each address, reproduced locally so the same tests pass
 * here and on AWS ("Using the mailbox simulator", SES developer guide). `+label` is allowed.
 * Locally nothing leaves the machine, so any other address is reported delivered.
 */
export type SimulatedOutcome = 'delivered' | 'bounced' | 'suppressed' | 'complained' | 'out_of_office';

const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

export function simulatedOutcome(address: string): SimulatedOutcome {
  const email = (/<([^>]+)>\s*$/.exec(address)?.[1] ?? address).trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (email.slice(at + 1) !== SIMULATOR_DOMAIN) return 'delivered';
  switch (email.slice(0, at).split('+')[0]) {
    case 'bounce':
      return 'bounced';
    case 'suppressionlist':
      return 'suppressed';
    case 'complaint':
      return 'complained';
    case 'ooto':
      return 'out_of_office';
    default:
      return 'delivered';
  }
}

export interface SentMessage {
  messageId: string;
  from: string;
  recipients: string[];
  subject: string;
  tags: Record<string, string[]>;
  configurationSet: string;
  sentAt: Date;
  /** The pixel and links SES's tracking put in it (ses-tracking.ts). */
  tracking?: MessageTracking;
}

const bare = (address: string) => (/<([^>]+)>\s*$/.exec(address)?.[1] ?? address).trim();

/** The `mail` object of every event SES publishes for a message. */
export function mailOf(message: SentMessage) {
  const recipients = message.recipients.map(bare);
  return {
    timestamp: message.sentAt.toISOString(),
    source: bare(message.from),
    sourceArn: `arn:aws:ses:us-east-1:000000000000:identity/${bare(message.from).split('@')[1]}`,
    sendingAccountId: '000000000000',
    messageId: message.messageId,
    destination: recipients,
    headersTruncated: false,
    commonHeaders: {
      from: [message.from],
      to: message.recipients,
      messageId: message.messageId,
      subject: message.subject,
    },
    tags: { 'ses:configuration-set': [message.configurationSet], ...message.tags },
  };
}

/**
 * The events SES would publish for one message, in the order it would publish them, each with the
 * delay after sending at which it is published: Send at once, one Delivery listing the delivered
 * recipients, one Bounce listing the bounced ones, then a Complaint (which of them reach the events
 * queue is the configuration set's destinations' choice). Shapes follow "Examples of event data that
 * Amazon SES publishes".
 */
export function simulateEvents(
  message: SentMessage,
  delayMs = 150,
  /** Addresses on SES's account-level suppression list: SES bounces them as `OnAccountSuppressionList`. */
  onSuppressionList: (address: string) => boolean = () => false,
): { delayMs: number; event: SesEvent }[] {
  const at = (ms: number) => new Date(message.sentAt.getTime() + ms).toISOString();
  const recipients = message.recipients.map(bare);
  const mail = mailOf(message);
  const byOutcome = (...outcomes: SimulatedOutcome[]) =>
    recipients.filter((r) =>
      outcomes.includes(onSuppressionList(r.toLowerCase()) ? 'suppressed' : simulatedOutcome(r)),
    );
  const delivered = byOutcome('delivered', 'complained', 'out_of_office');
  const bounced = byOutcome('bounced');
  const suppressed = byOutcome('suppressed');
  const complained = byOutcome('complained');

  // SES publishes Send as soon as it accepts the message.
  const events: { delayMs: number; event: SesEvent }[] = [{ delayMs: 0, event: { eventType: 'Send', mail } }];
  if (delivered.length) {
    events.push({
      delayMs,
      event: {
        eventType: 'Delivery',
        mail,
        delivery: {
          timestamp: at(delayMs),
          recipients: delivered,
          smtpResponse: '250 2.6.0 Message received',
        },
      },
    });
  }
  for (const [list, subType, diagnostic] of [
    [bounced, 'General', 'smtp; 550 5.1.1 user unknown'],
    [
      suppressed,
      'OnAccountSuppressionList',
      'Amazon SES did not send the message to this address because it is on the suppression list.',
    ],
  ] as const) {
    if (!list.length) continue;
    events.push({
      delayMs,
      event: {
        eventType: 'Bounce',
        mail,
        bounce: {
          timestamp: at(delayMs),
          bounceType: 'Permanent',
          bounceSubType: subType,
          bouncedRecipients: list.map((emailAddress) => ({
            emailAddress,
            action: 'failed',
            status: '5.1.1',
            diagnosticCode: diagnostic,
          })),
        },
      },
    });
  }
  if (complained.length) {
    events.push({
      delayMs: delayMs * 2,
      event: {
        eventType: 'Complaint',
        mail,
        complaint: {
          timestamp: at(delayMs * 2),
          complainedRecipients: complained.map((emailAddress) => ({ emailAddress })),
          complaintFeedbackType: 'abuse',
        },
      },
    });
  }
  return events;
}

/**
 * Whether SES puts this address on the account-level suppression list after sending to it (as it
 * does for hard bounces and complaints when the account's list is on, the default since 2019).
 */
export const joinsSuppressionList = (address: string): boolean =>
  ['bounced', 'complained'].includes(simulatedOutcome(address));
