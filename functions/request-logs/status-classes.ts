/*
 * The response status classes and methods the log list filters by, apart from the model so that the web console can import them: a module with no
 * imports (the console's bundle takes only what it imports, and has no node:crypto or zod).
 */

/** Response status classes the list filters by. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/** The methods a log has (Resend's), which the list filters by. */
export const LOG_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
