/**
 * Opens and clicks, and which of them a machine likely made. Mail-privacy proxies fetch the open
 * pixel for the reader (Apple Mail Privacy Protection fetches it as the message arrives, whether
 * anyone reads it; Gmail and Yahoo fetch images through their proxies), and link scanners of
 * mail gateways (Safe Links, Mimecast, Proofpoint, Barracuda…) follow every link before the reader
 * sees the message. Such opens and clicks are kept, and flagged with why (`automated`), never
 * dropped: the flag is a judgement from what SES reports (the user agent, and the time), not a fact.
 */

/** Why an open or click looks made by a machine rather than a reader. */
export const AUTOMATED_REASONS = ['privacy_proxy', 'scanner', 'too_soon'] as const;
export type AutomatedReason = (typeof AUTOMATED_REASONS)[number];

/**
 * An open or click this many seconds or less after SES accepted the email is flagged `too_soon`.
 * SES's Open and Click records carry the time the email was sent (`mail.timestamp`), not the time
 * it was delivered, which comes a moment later: the real time since delivery is shorter still, so
 * the rule flags fewer than a rule on delivery time would, never more. A reader who opens within
 * five seconds of sending is rare; a scanner or prefetching proxy nearly always is that fast.
 */
export const AUTOMATED_WITHIN_SECONDS = 5;

/** User agents of proxies that fetch images on the reader's behalf (or before they read). */
const PRIVACY_PROXIES: readonly RegExp[] = [
  // Apple Mail Privacy Protection fetches with this bare user agent, and nothing more.
  /^Mozilla\/5\.0$/,
  /GoogleImageProxy|ggpht\.com/i,
  /YahooMailProxy/i,
];

/** User agents of link scanners, crawlers and HTTP libraries (no reader behind them). */
const SCANNERS: readonly RegExp[] = [
  // A bot by name ("Googlebot/2.1", "Slackbot", "bot"), not a word ending in it ("CUBOT X19").
  /(?:^|[^a-z])bot\b|(?:google|bing|slack|twitter|facebook|linkedin|yandex|duckduck|apple|baidu|discord|telegram)bot|bot\/|crawler|spider|scanner|headless/i,
  /python-requests|python-urllib|aiohttp|curl\/|wget|go-http-client|java\/|okhttp|libwww|apache-httpclient|node-fetch|axios/i,
  /barracuda|mimecast|proofpoint|safelinks|microsoft office protection|zscaler|symantec|messagelabs|forcepoint|trend ?micro|sophos|cisco|ironport/i,
];

/**
 * Whether an open or click looks automated, and why: the user agent first (an empty one too), then
 * how soon after sending it came (`secondsSinceSent`; undefined when unknown). Undefined: nothing
 * says so, which does not prove a person.
 */
export function automatedReason(
  userAgent: string | undefined,
  secondsSinceSent: number | undefined,
): AutomatedReason | undefined {
  const agent = (userAgent ?? '').trim();
  if (PRIVACY_PROXIES.some((pattern) => pattern.test(agent))) return 'privacy_proxy';
  if (agent === '' || SCANNERS.some((pattern) => pattern.test(agent))) return 'scanner';
  if (secondsSinceSent !== undefined && secondsSinceSent <= AUTOMATED_WITHIN_SECONDS) return 'too_soon';
  return undefined;
}

/** Seconds from `from` to `to` (ISO times); undefined when either is not a time. */
export function secondsBetween(from: string | undefined, to: string | undefined): number | undefined {
  const start = Date.parse(from ?? '');
  const end = Date.parse(to ?? '');
  return Number.isNaN(start) || Number.isNaN(end) ? undefined : (end - start) / 1000;
}
