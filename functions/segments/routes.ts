import type { RouteDeclaration } from '../shared/route.js';

/** The segments routes (issue 40; shared/route.ts says what a declaration holds). */
export const SEGMENT_ROUTES = [] as const satisfies readonly RouteDeclaration[];
