import type { WorkerSpec } from '../shared/function-spec.js';

/** The broadcasts background functions (issue 41; shared/function-spec.ts). */
export const BROADCAST_WORKERS = {} as const satisfies Record<string, WorkerSpec>;
