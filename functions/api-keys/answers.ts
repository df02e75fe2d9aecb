import * as z from 'zod/mini';
import { named, reference, timestamp } from '../shared/answers.js';
import { PERMISSIONS } from './model.js';

/**
 * The API key routes' answers (shared/answers.ts says how answers are described).
 */

export const apiKeySchema = named(
  'ApiKey',
  z.object({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    permission: z.enum(PERMISSIONS),
    domain_id: z.nullable(z.string()).register(z.globalRegistry, {
      description: 'A sending key held to one domain: that domain; null otherwise.',
    }),
    created_at: timestamp,
    last_used_at: z.nullable(timestamp),
  }),
  "An API key, never its token. Ours beside Resend's fields: `object`, `permission`, `domain_id`.",
);

export const createdApiKeySchema = named(
  'CreatedApiKey',
  z.object({
    object: z.literal('api_key'),
    id: z.string(),
    token: z
      .string()
      .register(z.globalRegistry, { description: 'The key (`esk_…`): shown this once, never stored.' }),
  }),
  'A new API key and its token.',
);

export const apiKeyReferenceSchema = reference('api_key');
