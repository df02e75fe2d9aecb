import type { WorkerSpec } from '../shared/function-spec.js';

/** The contact-imports background functions (issue 40; shared/function-spec.ts). */
export const CONTACT_IMPORT_WORKERS = {} as const satisfies Record<string, WorkerSpec>;
