import type { LocalFaults } from './faults.js';
import type { GatewayAnswer } from './https-gateway.js';
import type { SesAccountSettings } from './ses-account.js';

/** What startLocalService (local/service.ts) takes: every setting has a default (`npm start`'s). */
export interface LocalServiceOptions {
  /** HTTPS port (0: any free port). @default 3000 */
  port?: number;
  /** Where data survives restarts; null keeps everything in memory. @default '.local-data' */
  dataDir?: string | null;
  /** Accept this key instead of generating one (DEV_API_KEY). */
  apiKey?: string;
  /** Port of the sent-mail viewer (the SES emulator's page). 0: any free port. @default 8005 */
  viewerPort?: number;
  /** The viewer port was chosen (VIEWER_PORT): fail when it is taken instead of using another. */
  viewerPortRequired?: boolean;
  /** Port of the inbound SMTP endpoint (SES receiving's twin). 0: any free port. @default 2525 */
  inboundSmtpPort?: number;
  /** The inbound SMTP port was chosen (INBOUND_SMTP_PORT): fail when it is taken instead of using another. */
  inboundSmtpPortRequired?: boolean;
  /** The SMTP relay's STARTTLS port (SMTP_RELAY_PORT). 0: any free port. @default 2587 */
  smtpRelayPort?: number;
  /** The relay's STARTTLS port was chosen: fail when it is taken instead of using another. */
  smtpRelayPortRequired?: boolean;
  /** The SMTP relay's implicit TLS port (SMTP_RELAY_TLS_PORT). 0: any free port. @default 2465 */
  smtpRelayTlsPort?: number;
  /** The relay's implicit TLS port was chosen: fail when it is taken instead of using another. */
  smtpRelayTlsPortRequired?: boolean;
  /**
   * Port of SES's open and click tracking host; taken, any free one. Fixed, so links in messages of
   * an earlier run still lead somewhere. @default the viewer's port + 1 (8006); any when the viewer's is 0
   */
  trackingPort?: number;
  /** Delay before simulated delivery events. @default 150 */
  eventDelayMs?: number;
  /** Receives before a send message goes to the dead-letter queue (the stack's sendMaxAttempts). @default 5 */
  sendMaxAttempts?: number;
  /** Visibility timeout of the local send queue: how soon a failed send is retried. @default 5 */
  sendRetryDelaySeconds?: number;
  /** How long the consumer waits for SES's answer before the outcome is unknown. @default 5000 */
  sesRequestTimeoutMs?: number;
  /**
   * How often the sweeper, the scheduler, the webhook retries and the metrics' roll-up run (each
   * EventBridge's one-minute schedule on AWS). @default 1000
   */
  sweepIntervalMs?: number;
  /**
   * How long a send consumer keeps a sender domain's options (a minute on AWS). @default 0: a
   * domain's new settings reach the next send
   */
  senderOptionsTtlMs?: number;
  /** How long SES may take to report a final event locally (the stack's 14 hours). @default 60 */
  maxDeliverySeconds?: number;
  /** Faults to inject into the stand-ins for AWS (`npm run chaos`; LOCAL_FAULTS). */
  faults?: LocalFaults;
  /**
   * The local SES account's limits (LOCAL_SES_*): its send rate, 24-hour quota, the sandbox,
   * paused sending. @default 14 per second and 50,000 per 24 hours, as a new production account
   */
  sesAccount?: SesAccountSettings;
  /** Most send consumer invocations at once (the stack's sendConcurrency). @default 5 */
  sendConcurrency?: number;
  /** How long a new domain stays pending before it verifies, as if its DNS records were published. @default 3000 */
  domainVerifyMs?: number;
  /** How long a domain under `.invalid` stays pending before it fails. @default 10000 */
  domainFailMs?: number;
  /** Requests per second each API key may make (the stack's keyRateLimit). @default 10 */
  rateLimitPerSecond?: number;
  /** Whether request logs keep bodies (the stack's requestLogBodies; REQUEST_LOG_BODIES). @default true */
  requestLogBodies?: boolean;
  /** How often the scheduled domain check runs (EventBridge's schedule on AWS). @default 1000 */
  domainCheckIntervalMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  onRequest?: (answer: GatewayAnswer) => void; // each answer of the HTTPS gateway (npm start prints a line each)
  /**
   * Runs the emulators and the consumers on threads of their own, so the service uses more than
   * one core (`npm start`, the benchmark, the load test). Off, everything runs on this thread,
   * where a test's middleware on the SDK clients sees every function's calls. @default false
   */
  threads?: boolean;
}
