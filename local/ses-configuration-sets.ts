import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PUBLISHED_EVENT_TYPES } from '../functions/adapters/ses/configuration-sets.js';
import type { SesReply } from './ses-identities.js';

/**
 * SES v2's configuration set API, which the SES emulator lacks, for `npm start`: create, get and
 * delete a set, put its delivery, tracking, reputation, sending and suppression options, and
 * create, list, update and delete its event destinations, with SES's request and response shapes
 * (so `@aws-sdk/client-sesv2` works unchanged).
 *
 * Locally there is no SNS: an SNS destination whose topic is `LOCAL_EVENTS_TOPIC_ARN` stands for
 * the stack's topic, whose raw-delivery subscription is the events queue. Events for any other
 * destination (another topic, CloudWatch, Firehose, EventBridge) have nowhere to go on this machine
 * and are dropped, though such a destination still turns tracking on, as on AWS.
 */

/** The local events topic: an SNS destination with this topic publishes to the events queue. */
export const LOCAL_EVENTS_TOPIC_ARN = 'arn:aws:sns:us-east-1:000000000000:email-service-local-events';

/** The configuration set the local stack sends with (CONFIGURATION_SET_NAME). */
export const LOCAL_CONFIGURATION_SET = 'email-service-local';

export const EVENT_TYPES = [
  'SEND',
  'REJECT',
  'BOUNCE',
  'COMPLAINT',
  'DELIVERY',
  'OPEN',
  'CLICK',
  'RENDERING_FAILURE',
  'DELIVERY_DELAY',
  'SUBSCRIPTION',
] as const;
export type SesEventType = (typeof EVENT_TYPES)[number];

/** What the stack's destination matches (a stack test holds lib/constructs/ses-events.ts to it). */
export const STACK_EVENT_TYPES: readonly SesEventType[] = PUBLISHED_EVENT_TYPES as readonly SesEventType[];

/** A published event's `eventType` → the type a destination matches. */
const TYPE_OF_EVENT: Record<string, SesEventType> = {
  Send: 'SEND',
  Reject: 'REJECT',
  Bounce: 'BOUNCE',
  Complaint: 'COMPLAINT',
  Delivery: 'DELIVERY',
  Open: 'OPEN',
  Click: 'CLICK',
  'Rendering Failure': 'RENDERING_FAILURE',
  DeliveryDelay: 'DELIVERY_DELAY',
  Subscription: 'SUBSCRIPTION',
};

const DESTINATION_KINDS = [
  'SnsDestination',
  'KinesisFirehoseDestination',
  'CloudWatchDestination',
  'EventBridgeDestination',
  'PinpointDestination',
] as const;

interface StoredDestination {
  Enabled: boolean;
  MatchingEventTypes: SesEventType[];
  SnsDestination?: { TopicArn: string };
  KinesisFirehoseDestination?: unknown;
  CloudWatchDestination?: unknown;
  EventBridgeDestination?: unknown;
  PinpointDestination?: unknown;
}

export interface TrackingOptions {
  CustomRedirectDomain?: string;
  HttpsPolicy?: 'REQUIRE' | 'REQUIRE_OPEN_ONLY' | 'OPTIONAL';
}

interface StoredSet {
  TrackingOptions?: TrackingOptions;
  // TlsPolicy REQUIRE changes nothing locally: delivery is simulated, no TLS session is ever made.
  DeliveryOptions?: { TlsPolicy?: string; SendingPoolName?: string; MaxDeliverySeconds?: number };
  ReputationOptions?: { ReputationMetricsEnabled?: boolean; LastFreshStart?: number };
  SendingOptions?: { SendingEnabled?: boolean };
  SuppressionOptions?: { SuppressedReasons?: string[] };
  Tags: { Key: string; Value: string }[];
  /** By name, in the order they were added. */
  destinations: Record<string, StoredDestination>;
}

/** /v2/email/configuration-sets[/{name}[/event-destinations[/{destination}] | /{options}]] */
const PATH =
  /^\/v2\/email\/configuration-sets(?:\/([^/?]+)(?:\/(event-destinations)(?:\/([^/?]+))?|\/([a-z-]+))?)?\/?(?:\?.*)?$/;
/** SES's rule for configuration set and event destination names. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The options a PUT …/{name}/{path} replaces, with the IAM action that grants it. */
const OPTIONS: Record<string, { key: keyof StoredSet; action: string }> = {
  'delivery-options': { key: 'DeliveryOptions', action: 'PutConfigurationSetDeliveryOptions' },
  'tracking-options': { key: 'TrackingOptions', action: 'PutConfigurationSetTrackingOptions' },
  'reputation-options': { key: 'ReputationOptions', action: 'PutConfigurationSetReputationOptions' },
  sending: { key: 'SendingOptions', action: 'PutConfigurationSetSendingOptions' },
  'suppression-options': { key: 'SuppressionOptions', action: 'PutConfigurationSetSuppressionOptions' },
};

/** The IAM action (ses:<action>) of a configuration set request, or undefined when it is not one. */
export function configurationSetAction(method: string, url: string): string | undefined {
  const match = PATH.exec(url);
  if (!match) return undefined;
  const [, name, destinations, destination, options] = match;
  if (!name) return method === 'POST' ? 'CreateConfigurationSet' : undefined;
  if (options) return method === 'PUT' ? OPTIONS[options]?.action : undefined;
  if (destinations) {
    if (!destination)
      return (
        {
          POST: 'CreateConfigurationSetEventDestination',
          GET: 'GetConfigurationSetEventDestinations',
        } as Record<string, string>
      )[method];
    return (
      {
        PUT: 'UpdateConfigurationSetEventDestination',
        DELETE: 'DeleteConfigurationSetEventDestination',
      } as Record<string, string>
    )[method];
  }
  return ({ GET: 'GetConfigurationSet', DELETE: 'DeleteConfigurationSet' } as Record<string, string>)[method];
}

const badRequest = (message: string): SesReply => ({
  status: 400,
  errorType: 'BadRequestException',
  body: { message },
});
const ok: SesReply = { status: 200, body: {} };

export interface LocalConfigurationSetOptions {
  /** JSON file the sets are kept in across restarts; none: in memory. */
  file?: string;
  /**
   * Whether a custom redirect domain is verified (it or a domain above it is a verified identity);
   * none: every domain is.
   */
  verifiedDomain?: (domain: string) => boolean;
}

/**
 * SES takes a custom redirect domain only when it is verified: its API reference lists
 * "InvalidTrackingOptions: the tracking domain you specified is not verified in Amazon SES" (v1);
 * v2 answers BadRequestException with this message.
 */
export const unverifiedRedirectDomain = (domain: string): SesReply =>
  badRequest(`Domain <${domain}> is not verified under this account.`);

export class LocalConfigurationSets {
  private readonly sets = new Map<string, StoredSet>();

  constructor(private readonly options: LocalConfigurationSetOptions = {}) {
    if (options.file && existsSync(options.file)) {
      const saved = JSON.parse(readFileSync(options.file, 'utf8')) as Record<string, StoredSet>;
      for (const [name, set] of Object.entries(saved)) this.sets.set(name, set);
    }
  }

  private save() {
    const file = this.options.file;
    if (!file) return;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, JSON.stringify(Object.fromEntries(this.sets), null, 2));
    renameSync(`${file}.tmp`, file);
  }

  /**
   * The set the stack creates (lib/constructs/ses-events.ts): suppression of bounces and
   * complaints, reputation metrics, a maximum delivery time, and one destination to the events
   * topic matching every type the stack's does. Written at every start, as a deploy would: the
   * stack's definition wins over what an earlier run changed.
   */
  defineStackSet(name: string, maxDeliverySeconds?: number) {
    this.sets.set(name, {
      // Locally the stack's delivery time is seconds, below the 300 s SES's API would take: set
      // here directly, as the stack's own is.
      DeliveryOptions: {
        TlsPolicy: 'OPTIONAL',
        ...(maxDeliverySeconds === undefined ? {} : { MaxDeliverySeconds: maxDeliverySeconds }),
      },
      ReputationOptions: { ReputationMetricsEnabled: true },
      SendingOptions: { SendingEnabled: true },
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
      Tags: [],
      destinations: {
        ToSns: {
          Enabled: true,
          MatchingEventTypes: [...STACK_EVENT_TYPES],
          SnsDestination: { TopicArn: LOCAL_EVENTS_TOPIC_ARN },
        },
      },
    });
    this.save();
  }

  has(name: string): boolean {
    return this.sets.has(name);
  }

  /** Whether sending with the set is on (SendingOptions.SendingEnabled, on unless turned off). */
  sendingEnabled(name: string): boolean {
    return this.sets.get(name)?.SendingOptions?.SendingEnabled !== false;
  }

  trackingOptions(name: string): TrackingOptions | undefined {
    return this.sets.get(name)?.TrackingOptions;
  }

  /** Whether an enabled destination of the set, of any kind, matches the type (which turns tracking on). */
  matches(name: string, type: SesEventType): boolean {
    return Object.values(this.sets.get(name)?.destinations ?? {}).some(
      (d) => d.Enabled && d.MatchingEventTypes.includes(type),
    );
  }

  /**
   * How many times an event is published to the events queue: once per enabled destination of the
   * set that matches its type and publishes to the local events topic (two such destinations on
   * AWS would each publish it).
   */
  publications(name: string, eventType: string | undefined): number {
    const type = TYPE_OF_EVENT[eventType ?? ''];
    if (!type) return 0;
    return Object.values(this.sets.get(name)?.destinations ?? {}).filter(
      (d) =>
        d.Enabled &&
        d.MatchingEventTypes.includes(type) &&
        d.SnsDestination?.TopicArn === LOCAL_EVENTS_TOPIC_ARN,
    ).length;
  }

  notFound(name: string): SesReply {
    return {
      status: 404,
      errorType: 'NotFoundException',
      body: { message: `Configuration set ${name} does not exist.` },
    };
  }

  /** Answers a configuration set request, or returns undefined when the request is not one. */
  handle(method: string, url: string, body: Buffer): SesReply | undefined {
    const match = PATH.exec(url);
    if (!match || !configurationSetAction(method, url)) return undefined;
    let request: Record<string, unknown>;
    try {
      request = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    } catch {
      return badRequest('Invalid JSON');
    }
    const [, rawName, , rawDestination, options] = match;
    if (!rawName) return this.create(request);
    const name = decodeURIComponent(rawName);
    const set = this.sets.get(name);
    if (!set) return this.notFound(name);
    if (options) return this.putOptions(name, set, options, request);
    if (match[2]) {
      if (!rawDestination) {
        if (method === 'GET')
          return {
            status: 200,
            body: {
              EventDestinations: Object.entries(set.destinations).map(([Name, d]) => ({ Name, ...d })),
            },
          };
        return this.addDestination(set, request);
      }
      const destination = decodeURIComponent(rawDestination);
      if (!set.destinations[destination])
        return {
          status: 404,
          errorType: 'NotFoundException',
          body: { message: `Event destination ${destination} does not exist.` },
        };
      if (method === 'DELETE') delete set.destinations[destination];
      else {
        const definition = destinationOf(request.EventDestination);
        if (typeof definition === 'string') return badRequest(definition);
        set.destinations[destination] = definition;
      }
      this.save();
      return ok;
    }
    if (method === 'DELETE') {
      this.sets.delete(name);
      this.save();
      return ok;
    }
    return { status: 200, body: describe(name, set) };
  }

  /** SES's refusal of tracking options whose custom redirect domain is not verified. */
  private unverified(path: string, values: unknown): SesReply | undefined {
    const domain = (values as { CustomRedirectDomain?: unknown }).CustomRedirectDomain;
    if (path !== 'tracking-options' || typeof domain !== 'string') return undefined;
    return this.options.verifiedDomain && !this.options.verifiedDomain(domain.toLowerCase())
      ? unverifiedRedirectDomain(domain)
      : undefined;
  }

  private create(request: Record<string, unknown>): SesReply {
    const name = request.ConfigurationSetName;
    if (typeof name !== 'string' || !NAME.test(name))
      return badRequest(
        `Invalid configuration set name ${String(name)}: up to 64 letters, digits, underscores (_) or hyphens (-).`,
      );
    if (this.sets.has(name))
      return {
        status: 400,
        errorType: 'AlreadyExistsException',
        body: { message: `Configuration set ${name} already exists.` },
      };
    const set: StoredSet = { Tags: [], destinations: {} };
    for (const [path, { key }] of Object.entries(OPTIONS)) {
      if (request[key] === undefined) continue;
      const problem = checkOptions(path, request[key], true);
      if (problem) return badRequest(problem);
      const refused = this.unverified(path, request[key]);
      if (refused) return refused;
      (set as unknown as Record<string, unknown>)[key] = request[key];
    }
    if (request.Tags !== undefined) {
      if (!validTags(request.Tags)) return badRequest('Tags must be a list of {Key, Value}.');
      set.Tags = request.Tags;
    }
    this.sets.set(name, set);
    this.save();
    return ok;
  }

  private putOptions(name: string, set: StoredSet, path: string, request: Record<string, unknown>): SesReply {
    const option = OPTIONS[path];
    if (!option) return badRequest(`Unknown option ${path}.`);
    const { ConfigurationSetName: _, ...values } = request;
    const problem = checkOptions(path, values, false);
    if (problem) return badRequest(problem);
    const refused = this.unverified(path, values);
    if (refused) return refused;
    // A PUT replaces the whole option: what it leaves out is removed (a tracking PUT without
    // CustomRedirectDomain goes back to SES's own tracking domain).
    if (Object.keys(values).length) (set as unknown as Record<string, unknown>)[option.key] = values;
    else delete (set as unknown as Record<string, unknown>)[option.key];
    this.sets.set(name, set);
    this.save();
    return ok;
  }

  private addDestination(set: StoredSet, request: Record<string, unknown>): SesReply {
    const name = request.EventDestinationName;
    if (typeof name !== 'string' || !NAME.test(name))
      return badRequest(
        `Invalid event destination name ${String(name)}: up to 64 letters, digits, underscores (_) or hyphens (-).`,
      );
    if (set.destinations[name])
      return {
        status: 400,
        errorType: 'AlreadyExistsException',
        body: { message: `Event destination ${name} already exists.` },
      };
    const definition = destinationOf(request.EventDestination);
    if (typeof definition === 'string') return badRequest(definition);
    set.destinations[name] = definition;
    this.save();
    return ok;
  }
}

/** GetConfigurationSet's answer: SES's defaults for what was never set. */
function describe(name: string, set: StoredSet) {
  return {
    ConfigurationSetName: name,
    ...(set.TrackingOptions ? { TrackingOptions: set.TrackingOptions } : {}),
    DeliveryOptions: { TlsPolicy: 'OPTIONAL', ...set.DeliveryOptions },
    ReputationOptions: { ReputationMetricsEnabled: false, ...set.ReputationOptions },
    SendingOptions: { SendingEnabled: true, ...set.SendingOptions },
    ...(set.SuppressionOptions ? { SuppressionOptions: set.SuppressionOptions } : {}),
    Tags: set.Tags,
  };
}

const oneOf = (value: unknown, allowed: readonly string[]) =>
  value === undefined || (typeof value === 'string' && allowed.includes(value));

/** What is wrong with an option's values, in SES's terms; undefined when nothing. */
function checkOptions(path: string, value: unknown, creating: boolean): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${path} must be an object.`;
  const v = value as Record<string, unknown>;
  switch (path) {
    case 'delivery-options': {
      if (!oneOf(v.TlsPolicy, ['REQUIRE', 'OPTIONAL'])) return 'TlsPolicy must be REQUIRE or OPTIONAL.';
      const seconds = v.MaxDeliverySeconds;
      if (
        seconds !== undefined &&
        !(Number.isInteger(seconds) && (seconds as number) >= 300 && (seconds as number) <= 50_400)
      )
        return 'MaxDeliverySeconds must be between 300 and 50400 seconds.';
      return undefined;
    }
    case 'tracking-options':
      // Required when creating with tracking options; a PUT without it removes the custom domain.
      if (creating && typeof v.CustomRedirectDomain !== 'string') return 'CustomRedirectDomain is required.';
      if (v.CustomRedirectDomain !== undefined && typeof v.CustomRedirectDomain !== 'string')
        return 'CustomRedirectDomain must be a domain name.';
      if (!oneOf(v.HttpsPolicy, ['REQUIRE', 'REQUIRE_OPEN_ONLY', 'OPTIONAL']))
        return 'HttpsPolicy must be REQUIRE, REQUIRE_OPEN_ONLY or OPTIONAL.';
      return undefined;
    case 'suppression-options': {
      const reasons = v.SuppressedReasons;
      if (
        reasons !== undefined &&
        !(Array.isArray(reasons) && reasons.every((r) => oneOf(r, ['BOUNCE', 'COMPLAINT'])))
      )
        return 'SuppressedReasons may hold only BOUNCE and COMPLAINT.';
      return undefined;
    }
    default:
      return undefined;
  }
}

const validTags = (tags: unknown): tags is StoredSet['Tags'] =>
  Array.isArray(tags) &&
  tags.every(
    (t) => typeof t === 'object' && t !== null && typeof t.Key === 'string' && typeof t.Value === 'string',
  );

/** An event destination definition as SES stores it, or what is wrong with it. */
function destinationOf(value: unknown): StoredDestination | string {
  if (typeof value !== 'object' || value === null) return 'EventDestination is required.';
  const d = value as Record<string, unknown>;
  const types = d.MatchingEventTypes;
  if (!Array.isArray(types) || !types.length || !types.every((t) => EVENT_TYPES.includes(t)))
    return `MatchingEventTypes must list one or more of ${EVENT_TYPES.join(', ')}.`;
  const kinds = DESTINATION_KINDS.filter((kind) => d[kind] !== undefined);
  if (kinds.length !== 1) return 'An event destination needs exactly one destination.';
  const sns = d.SnsDestination as { TopicArn?: unknown } | undefined;
  if (sns && (typeof sns.TopicArn !== 'string' || !sns.TopicArn.startsWith('arn:')))
    return 'SnsDestination.TopicArn must be a topic ARN.';
  return {
    // Off unless asked for, as SES leaves a destination created without Enabled.
    Enabled: d.Enabled === true,
    MatchingEventTypes: [...new Set(types as SesEventType[])],
    ...Object.fromEntries(kinds.map((kind) => [kind, d[kind]])),
  };
}
