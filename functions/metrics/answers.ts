import { named } from '../shared/answers.js';
import { emailMetricsResponseSchema } from './model.js';

/** The metrics route's answer (shared/answers.ts says how answers are described). */
export const emailMetricsSchema = named(
  'EmailMetrics',
  emailMetricsResponseSchema,
  'Email metrics: the counts asked for (sent, delivered, bounced, complained, failed, suppressed, opened, clicked, …) and their rates, over the range, totalled and broken down by the dimensions asked for.',
);
