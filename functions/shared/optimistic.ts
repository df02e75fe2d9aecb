import { type ApiError, conflict } from './errors.js';

/** What an attempt answers when another writer's change came between its read and its write. */
export const AGAIN = Symbol('again');

/** Attempts a change makes before it gives up to writers that keep getting there first. */
export const MAX_OPTIMISTIC_ATTEMPTS = 5;

/**
 * An optimistic read-modify-write: `attempt` reads what it changes, changes it and writes it on the
 * condition that it is still the version read, and answers AGAIN when that condition failed
 * (another writer's change came between: the next attempt reads theirs and applies the change to
 * it). After MAX_OPTIMISTIC_ATTEMPTS, `giveUp` runs (putting back what the attempts did elsewhere)
 * and the change is a 409 naming what others keep changing.
 */
export async function optimistically<T>(
  /** What is changed, as the 409 names it (or how to name it, from what the attempts read). */
  what: string | (() => string),
  attempt: () => Promise<T | typeof AGAIN>,
  giveUp?: () => Promise<void>,
): Promise<T> {
  for (let n = 1; ; n++) {
    const result = await attempt();
    if (result !== AGAIN) return result;
    if (n >= MAX_OPTIMISTIC_ATTEMPTS) {
      await giveUp?.();
      throw busy(typeof what === 'string' ? what : what());
    }
  }
}

const busy = (what: string): ApiError => conflict(`${what} is being changed by other requests; try again.`);
