/*
 * The web console's own rate budget, apart from the rate limiter so that the console can import it:
 * a module with no imports (the console's bundle takes only what it imports).
 */

/**
 * The header the console sends on every request (`Console-Request: 1`). A request that carries it
 * counts on the key's console counter instead of its application counter (api-keys/rate-limit.ts),
 * so a person browsing never takes the rate an application sending with the same key has.
 */
export const CONSOLE_REQUEST_HEADER = 'console-request';

/**
 * Requests a second a key's console counter takes (the key's own limit if that is lower): the console paces
 * itself to this many (console/src/api.ts), so one tab never meets a 429 of its own making.
 */
export const CONSOLE_RATE_LIMIT = 5;
