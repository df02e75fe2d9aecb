import type {
  FunctionAccess,
  SesConfigurationSetAction,
  SesIdentityAction,
} from '../shared/function-spec.js';

/**
 * What the domain functions (the routes and the scheduled check) may do beyond the table, shared
 * by their declarations (routes.ts, workers.ts).
 */

export const READ_IDENTITY: readonly SesIdentityAction[] = ['GetEmailIdentity'];

/**
 * What a function that brings a domain's configuration set to its settings calls (adapters/ses/
 * configuration-sets.ts): create it (tagged) or update its options, and its event destination.
 */
export const PUT_CONFIGURATION_SET: readonly SesConfigurationSetAction[] = [
  'CreateConfigurationSet',
  'TagResource',
  'PutConfigurationSetDeliveryOptions',
  'PutConfigurationSetTrackingOptions',
  'CreateConfigurationSetEventDestination',
  'UpdateConfigurationSetEventDestination',
];

/** The settings every domain function reads to keep a domain's own configuration set. */
export const DOMAIN_SETTINGS = {
  env: [
    'WEBHOOK_QUEUE_URL',
    'SES_EVENTS_TOPIC_ARN',
    'SES_MAX_DELIVERY_SECONDS',
    'DOMAIN_CONFIGURATION_SET_PREFIX',
  ],
  optionalEnv: [
    'TRACKING_HTTPS_TARGET',
    'LOCAL_DNS_PUBLISHED',
    'LOCAL_TRACKING_FRONT',
    'LOCAL_TRACKING_FRONT_CA',
  ],
} as const satisfies FunctionAccess;

/**
 * What a function that changes a domain's receiving (or, the scheduled check, asks again each run)
 * adds: the receipt-rule writer's queue, where the stack receives (domains/receiving.ts).
 */
export const CHANGES_RECEIVING = {
  optionalEnv: [...DOMAIN_SETTINGS.optionalEnv, 'RECEIPT_RULES_QUEUE_URL'],
  receiptRuleQueue: ['SendMessage'],
} as const satisfies FunctionAccess;
