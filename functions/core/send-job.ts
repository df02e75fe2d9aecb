import * as z from 'zod/mini';
import type { SendJob } from './ports.js';

/** A send queue message as the send path writes it (see ports.ts, SendJob). */
const sendJobSchema = z.object({
  id: z.string().check(z.minLength(1)),
  content: z.object({
    from: z.string(),
    to: z.array(z.string()).check(z.minLength(1)),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    reply_to: z.array(z.string()),
    subject: z.string(),
    html: z.nullable(z.string()),
    text: z.nullable(z.string()),
    // Absent from jobs queued before tags and headers existed.
    tags: z._default(z.array(z.object({ name: z.string(), value: z.string() })), []),
    headers: z._default(z.record(z.string(), z.string()), {}),
  }),
});

/** The job in a queue message's body; undefined when it is not one (corrupt, or not ours). */
export function parseSendJob(body: string | undefined): SendJob | undefined {
  try {
    const result = sendJobSchema.safeParse(JSON.parse(body ?? ''));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
