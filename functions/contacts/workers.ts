import type { WorkerSpec } from '../shared/function-spec.js';

/** The contacts background functions (issue 40; shared/function-spec.ts). */
export const CONTACT_WORKERS = {} as const satisfies Record<string, WorkerSpec>;
