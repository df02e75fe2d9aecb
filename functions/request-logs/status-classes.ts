/*
 * The response status classes the log list filters by, apart from the model so that the web console can import them: a module with no
 * imports (the console's bundle takes only what it imports, and has no node:crypto or zod).
 */

/** Response status classes the list filters by. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
