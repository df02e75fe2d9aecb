import * as z from 'zod/mini';
import { named } from '../shared/answers.js';
import { GRANULARITIES, RESEND_DIMENSIONS, SUPPORTED_METRICS } from './model.js';

/** The answer's shape (for the OpenAPI document): Resend's `GetEmailsMetricsResponse`. */
export const emailMetricsRowSchema = z.catchall(
  z.object({
    period: z.optional(z.string()),
    domain_id: z.optional(z.string()),
    domain_name: z.optional(z.string()),
    broadcast_id: z.optional(z.string()),
    broadcast_name: z.optional(z.string()),
  }),
  z.number(),
);
export const emailMetricsResponseSchema = z.object({
  object: z.literal('metrics'),
  start_date: z.string(),
  end_date: z.string(),
  metrics: z.array(z.enum(SUPPORTED_METRICS)),
  dimensions: z.array(z.enum(RESEND_DIMENSIONS)),
  granularity: z.enum(GRANULARITIES),
  totals: z.record(z.string(), z.number()),
  data: z.optional(z.array(emailMetricsRowSchema)),
});

/** The metrics route's answer (shared/answers.ts says how answers are described). */
export const emailMetricsSchema = named(
  'EmailMetrics',
  emailMetricsResponseSchema,
  'Email metrics: the counts asked for (sent, delivered, bounced, complained, failed, suppressed, opened, clicked, …) and their rates, over the range, totalled and broken down by the dimensions asked for.',
);
