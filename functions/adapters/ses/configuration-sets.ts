import {
  CreateConfigurationSetCommand,
  CreateConfigurationSetEventDestinationCommand,
  DeleteConfigurationSetCommand,
  type EventType,
  PutConfigurationSetDeliveryOptionsCommand,
  PutConfigurationSetTrackingOptionsCommand,
  type SESv2Client,
  UpdateConfigurationSetEventDestinationCommand,
} from '@aws-sdk/client-sesv2';
import type { DomainConfigurationSet } from '../../domains/model.js';
import type { ConfigurationSets } from '../../domains/ports.js';
import { newSesClient } from '../aws-clients.js';
import { OWNER_TAG, toIdentityError } from './identities.js';

/**
 * The event types the stack's configuration set publishes (lib/constructs/ses-events.ts; a test
 * compares them): a domain's own set publishes the same, to the same topic, so its emails' events
 * reach the same consumer.
 */
export const PUBLISHED_EVENT_TYPES: readonly EventType[] = [
  'SEND',
  'REJECT',
  'BOUNCE',
  'COMPLAINT',
  'DELIVERY',
  'DELIVERY_DELAY',
  'RENDERING_FAILURE',
  'OPEN',
  'CLICK',
];

export const EVENT_DESTINATION_NAME = 'events';

const exists = (error: unknown) => error instanceof Error && error.name === 'AlreadyExistsException';
const notFound = (error: unknown) => error instanceof Error && error.name === 'NotFoundException';

export interface SesConfigurationSetsOptions {
  /** The stack's events topic, the destination of every set's events. */
  eventsTopicArn: string;
  /** SES's maximum delivery time, as the stack's set has it (the sweeper relies on it). */
  maxDeliverySeconds: number;
  /** The tag that marks what this service created (the table name, as on identities). */
  owner: string;
}

/**
 * A domain's own SES configuration set: like the stack's (bounces and complaints to SES's
 * suppression list, reputation metrics, the maximum delivery time, every event to the events
 * topic), with the domain's TLS policy and, once its tracking host is published, the host as the
 * custom redirect domain over HTTPS (REQUIRE: SES writes the pixel and every link with https, so
 * the host must be served by an HTTPS front: docs/tracking.md).
 */
export class SesConfigurationSets implements ConfigurationSets {
  constructor(
    private readonly client: SESv2Client,
    private readonly options: SesConfigurationSetsOptions,
  ) {}

  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw toIdentityError(error);
    }
  }

  async put(set: DomainConfigurationSet): Promise<void> {
    const delivery = {
      TlsPolicy: set.tls === 'enforced' ? ('REQUIRE' as const) : ('OPTIONAL' as const),
      MaxDeliverySeconds: this.options.maxDeliverySeconds,
    };
    const tracking = set.redirect_domain
      ? { CustomRedirectDomain: set.redirect_domain, HttpsPolicy: 'REQUIRE' as const }
      : undefined;
    try {
      await this.client.send(
        new CreateConfigurationSetCommand({
          ConfigurationSetName: set.name,
          DeliveryOptions: delivery,
          ...(tracking ? { TrackingOptions: tracking } : {}),
          ReputationOptions: { ReputationMetricsEnabled: true },
          SendingOptions: { SendingEnabled: true },
          SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
          Tags: [{ Key: OWNER_TAG, Value: this.options.owner }],
        }),
      );
    } catch (error) {
      if (!exists(error)) throw toIdentityError(error);
      // Made by an earlier attempt, or the domain's settings changed: bring it to these.
      await this.call(() =>
        this.client.send(
          new PutConfigurationSetDeliveryOptionsCommand({ ConfigurationSetName: set.name, ...delivery }),
        ),
      );
      await this.call(() =>
        this.client.send(
          // Without a domain, SES goes back to its own tracking host.
          new PutConfigurationSetTrackingOptionsCommand({
            ConfigurationSetName: set.name,
            ...(tracking ?? {}),
          }),
        ),
      );
    }
    const destination = {
      ConfigurationSetName: set.name,
      EventDestinationName: EVENT_DESTINATION_NAME,
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: [...PUBLISHED_EVENT_TYPES],
        SnsDestination: { TopicArn: this.options.eventsTopicArn },
      },
    };
    try {
      await this.client.send(new CreateConfigurationSetEventDestinationCommand(destination));
    } catch (error) {
      if (!exists(error)) throw toIdentityError(error);
      // There already: as the stack's now (its topic or event types may have changed since).
      await this.call(() => this.client.send(new UpdateConfigurationSetEventDestinationCommand(destination)));
    }
  }

  async delete(name: string): Promise<void> {
    try {
      await this.client.send(new DeleteConfigurationSetCommand({ ConfigurationSetName: name }));
    } catch (error) {
      if (!notFound(error)) throw toIdentityError(error);
    }
  }
}

export const createSesConfigurationSets = (options: SesConfigurationSetsOptions) =>
  new SesConfigurationSets(newSesClient(), options);
