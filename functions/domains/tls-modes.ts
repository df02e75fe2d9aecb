/*
 * The TLS modes a domain may send with, apart from the model so that the web console can import them: a module with no
 * imports (the console's bundle takes only what it imports, and has no node:crypto or zod).
 */

/** `opportunistic`: TLS when the receiving server offers it; `enforced`: only over TLS, or the email bounces. */
export const TLS_MODES = ['opportunistic', 'enforced'] as const;
