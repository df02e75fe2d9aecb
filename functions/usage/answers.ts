import * as z from 'zod/mini';

/** `GET /v1/usage`'s answer (SDK 6.38's GetUsageResponseSuccess, and our `sending`): model.ts fills it. */
const window = <L extends z.ZodMiniType>(limit: L) =>
  z.object({ used: z.number(), limit, sent: z.number(), received: z.number(), resets_at: z.string() });

export const usageSchema = z.object({
  object: z.literal('usage'),
  emails: z.object({ daily: window(z.nullable(z.number())), monthly: window(z.number()) }),
  contacts: z.object({ used: z.number(), limit: z.number() }),
  segments: z.object({ used: z.number(), limit: z.nullable(z.number()) }),
  broadcasts: z.object({ used: z.number(), limit: z.null() }),
  ai_credits: z.object({
    used: z.number(),
    limit: z.nullable(z.number()),
    next_increase_at: z.nullable(z.string()),
  }),
  automation_runs: z.object({ used: z.number(), limit: z.number(), resets_at: z.string() }),
  domains: z.object({ used: z.number(), limit: z.nullable(z.number()) }),
  rate_limit: z.object({ limit: z.number(), duration: z.string() }),
  /** Ours: SES's sending state for the account as last read (paused: SES stopped the account's sending). */
  sending: z.object({
    paused: z.boolean(),
    max_send_rate: z.nullable(z.number()),
    limits_read_at: z.nullable(z.string()),
  }),
});
