import { MAX_MESSAGE_BYTES } from '../emails/attachments.js';
import { MAX_RECIPIENTS } from '../emails/email.js';

/**
 * The SMTP relay's fixed numbers (issue 42), shared by the relay (functions/smtp-relay/), its
 * container and the stack (lib/constructs/smtp-relay.ts), so each says the same thing once.
 */

/** The AUTH username apps give, as Resend's `smtp.resend.com` takes it; the password is an API key. */
export const SMTP_USERNAME = 'resend';

/** The largest message taken (SIZE, advertised in EHLO): SES's limit on a whole message. */
export const SMTP_MAX_MESSAGE_BYTES = MAX_MESSAGE_BYTES;

/** Recipients a message may have (SES's, and POST /v1/emails'): the 51st RCPT TO answers 452 4.5.3. */
export const SMTP_MAX_RECIPIENTS = MAX_RECIPIENTS;

/** The ports inside the relay's container (the stack's target groups; the settings' defaults). */
export const CONTAINER_PORTS = { starttls: 2587, secured: 2465, health: 8080 } as const;

/** The load balancer's ports, as Resend's: implicit TLS (a TLS listener) and STARTTLS (TCP pass-through). */
export const NLB_PORTS = { implicitTls: [465, 2465], starttls: [587, 2587] } as const;

/** The local relay's default ports (`npm start`: SMTP_RELAY_PORT, SMTP_RELAY_TLS_PORT). */
export const LOCAL_PORTS = { starttls: 2587, implicitTls: 2465 } as const;

/**
 * The relay's own metric, published by each task (embedded metric format on its log stream) and
 * tracked by the service's scaling: the SMTP connections it holds open.
 */
export const RELAY_METRICS = {
  namespace: 'EmailService/SmtpRelay',
  activeConnections: 'ActiveConnections',
} as const;

/**
 * A deploy's grace: the target groups' deregistration delay lets open sessions go on while no new
 * one comes, then the task gets SIGTERM and this long (Fargate's most) to let an open DATA finish,
 * answering 421 to every other command, before it is killed.
 */
export const STOP_TIMEOUT_SECONDS = 120;
export const DEREGISTRATION_DELAY_SECONDS = 120;
