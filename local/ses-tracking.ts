import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SesEvent } from '../functions/adapters/ses/events.js';
import { type MessageTracking, mailOf, type SentMessage, type TrackedLink } from './mailbox-simulator.js';

/**
 * SES's open and click tracking, locally. With tracking on for a send, SES rewrites the HTML part
 * before sending it: every http(s) link becomes a link to its tracking host (r.<region>.awstrack.me)
 * that answers a redirect to the original and publishes a Click event, and a 1×1 transparent GIF
 * from that host is added, whose every fetch publishes an Open event ("Amazon SES email sending
 * metrics FAQs"). Here the tracking host is a listener of its own on 127.0.0.1, so nothing leaves
 * the machine: a mail client, a browser or curl on it can open the message's links.
 *
 * What a link's token stands for is kept with its message (the ledger keeps accepted messages, so
 * a restart with the same data folder still redirects links of earlier messages, until a large
 * ledger is compacted to the emails still open; in memory they last as long as the process). A
 * message sent without an email id tag is never in the ledger: its tokens last as long as the
 * process. Tokens are random: a token never names a URL, and the host only ever redirects to the
 * link it stored for the token, so it is no open redirect. Opens and clicks are published when
 * they happen and are not in the ledger: a kill before they reach the queue loses them.
 */

/** A link the tracking rewrote: its token redirects to `url`. */
export type { MessageTracking, TrackedLink } from './mailbox-simulator.js';

const OPEN_PATH = '/I0/';
const CLICK_PATH = '/L0/';
/** 128 random bits, base64url: unguessable. */
const newToken = () => randomBytes(16).toString('base64url');

/** A 1×1 transparent GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** An anchor's start tag (attribute values may hold `>`). */
const ANCHOR = /<a\s(?:[^<>"']|"[^"]*"|'[^']*')*>/gi;
const ATTRIBUTE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
/** SES's placeholder for where the open pixel goes. */
const OPEN_TRACKER = '{{ses:openTracker}}';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** An attribute's value as a browser reads it (`&amp;` in a query string is `&`). */
const decodeEntities = (value: string) =>
  value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code =
        name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      // Past Unicode's last code point (or a surrogate) a browser reads U+FFFD: left as written.
      return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });

/** `ses:tags="campaign:spring;position:top"` → { campaign: ['spring'], position: ['top'] }. */
const linkTags = (value: string | undefined): Record<string, string[]> => {
  const tags: Record<string, string[]> = {};
  for (const pair of (value ?? '').split(';')) {
    const at = pair.indexOf(':');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    tags[name] = [...(tags[name] ?? []), pair.slice(at + 1).trim()];
  }
  return tags;
};

export interface TrackingSettings {
  open: boolean;
  click: boolean;
  /** The tracking host's base URL. */
  baseUrl: string;
  /**
   * The set's TrackingOptions.CustomRedirectDomain. On AWS the links would point there; locally
   * they still point at the local host (that domain's records do not lead to this machine), and
   * carry it only so a reader of the message sees which domain SES would have used.
   */
  customDomain?: string;
}

/**
 * The HTML part as SES sends it with tracking on: with click tracking, every `<a href>` to an
 * http(s) URL rewritten (not mailto:, tel:, fragments, nor an anchor carrying `ses:no-track`); with
 * open tracking, the pixel at the first `{{ses:openTracker}}` (later ones removed), else at the end
 * of the body. SES rewrites only HTML: text parts are left as they are.
 */
export function trackHtml(
  html: string,
  settings: TrackingSettings,
): { html: string; tracking: MessageTracking } {
  const tracking: MessageTracking = { links: [] };
  const via = settings.customDomain ? `?domain=${encodeURIComponent(settings.customDomain)}` : '';
  let out = html;
  if (settings.click)
    out = out.replace(ANCHOR, (tag) => {
      const inner = tag.slice(2, -1);
      let href: { at: number; length: number; value: string } | undefined;
      let noTrack = false;
      let tags: string | undefined;
      for (const m of inner.matchAll(ATTRIBUTE)) {
        const name = (m[1] ?? '').toLowerCase();
        const value = m[2] ?? m[3] ?? m[4];
        if (name === 'href' && !href) href = { at: m.index, length: m[0].length, value: value ?? '' };
        else if (name === 'ses:no-track') noTrack = true;
        else if (name === 'ses:tags') tags = value;
      }
      if (!href || noTrack) return tag;
      const url = decodeEntities(href.value).trim();
      if (!/^https?:\/\//i.test(url)) return tag;
      const link: TrackedLink = { token: newToken(), url, tags: linkTags(tags && decodeEntities(tags)) };
      tracking.links.push(link);
      const rewritten = `href="${settings.baseUrl}${CLICK_PATH}${link.token}${via}"`;
      return `${tag.slice(0, 2)}${inner.slice(0, href.at)}${rewritten}${inner.slice(href.at + href.length)}>`;
    });
  if (settings.open) {
    tracking.open = newToken();
    const pixel = `<img alt="" src="${settings.baseUrl}${OPEN_PATH}${tracking.open}${via}" width="1" height="1" style="display: none; width: 1px; height: 1px;">`;
    const first = out.indexOf(OPEN_TRACKER);
    if (first >= 0)
      out = `${out.slice(0, first)}${pixel}${out.slice(first + OPEN_TRACKER.length).replaceAll(OPEN_TRACKER, '')}`;
    else {
      const bodyEnd = out.toLowerCase().lastIndexOf('</body');
      out = bodyEnd >= 0 ? `${out.slice(0, bodyEnd)}${pixel}${out.slice(bodyEnd)}` : `${out}${pixel}`;
    }
  }
  return { html: out, tracking };
}

/** Every token of the messages SES took with tracking on, to the message (and link) it stands for. */
export class TrackingTokens {
  private readonly opens = new Map<string, SentMessage>();
  private readonly clicks = new Map<string, { message: SentMessage; link: TrackedLink }>();

  add(message: SentMessage) {
    if (message.tracking?.open) this.opens.set(message.tracking.open, message);
    for (const link of message.tracking?.links ?? []) this.clicks.set(link.token, { message, link });
  }

  open(token: string) {
    return this.opens.get(token);
  }

  click(token: string) {
    return this.clicks.get(token);
  }
}

export interface TrackingHost {
  /** Base URL of the tracking host (SES's r.<region>.awstrack.me), e.g. http://127.0.0.1:8006. */
  url: string;
  stop(): Promise<void>;
}

/** The address a fetch came from, as SES reports it (not a header a client may set). */
const clientAddress = (req: IncomingMessage) => (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');

/** The redirect target as a header takes it (a non-ASCII host or path encoded, as a browser would). */
const location = (url: string) => {
  try {
    return new URL(url).href;
  } catch {
    return encodeURI(url);
  }
};

/**
 * The tracking host on 127.0.0.1 (`port`, or any free port when it is taken or 0). A GET of a pixel
 * answers the GIF and publishes an Open event, a GET of a link answers 302 to the link's original
 * URL and publishes a Click event: every fetch, as SES counts every open and click. HEAD answers
 * the same without an event. An unknown token answers 404, never a redirect.
 */
export async function startTrackingHost(options: {
  port?: number;
  tokens: TrackingTokens;
  publish: (message: SentMessage, event: SesEvent) => void;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}): Promise<TrackingHost> {
  const server: Server = createServer((req, res) => {
    req.resume();
    // Each open or click is a fetch of its own: no connection is kept to a host a restart replaces.
    res.shouldKeepAlive = false;
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      return res.end('Method not allowed');
    }
    const fetched = req.method === 'GET';
    const who = { ipAddress: clientAddress(req), timestamp: new Date().toISOString() };
    const userAgent = String(req.headers['user-agent'] ?? '');
    const noStore = { 'cache-control': 'no-store, no-cache, must-revalidate, max-age=0', pragma: 'no-cache' };
    if (path.startsWith(OPEN_PATH)) {
      const message = options.tokens.open(path.slice(OPEN_PATH.length));
      if (message) {
        if (fetched)
          options.publish(message, {
            eventType: 'Open',
            mail: mailOf(message),
            open: { ipAddress: who.ipAddress, timestamp: who.timestamp, userAgent },
          });
        res.writeHead(200, { 'content-type': 'image/gif', 'content-length': PIXEL.length, ...noStore });
        return res.end(fetched ? PIXEL : undefined);
      }
    } else if (path.startsWith(CLICK_PATH)) {
      const found = options.tokens.click(path.slice(CLICK_PATH.length));
      if (found) {
        if (fetched)
          options.publish(found.message, {
            eventType: 'Click',
            mail: mailOf(found.message),
            click: {
              ipAddress: who.ipAddress,
              link: found.link.url,
              linkTags: found.link.tags,
              timestamp: who.timestamp,
              userAgent,
            },
          });
        res.writeHead(302, { location: location(found.link.url), ...noStore });
        return res.end();
      }
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...noStore });
    res.end('Not found');
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(options.port ?? 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    // Links of earlier messages point at the port asked for; new ones work on any.
    options.log?.('the SES tracking port was taken; using another', { port: options.port });
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
