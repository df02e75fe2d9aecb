import type { RouteDeclaration } from '../shared/route.js';

/** The broadcasts routes (issue 41; shared/route.ts says what a declaration holds). */
export const BROADCAST_ROUTES = [] as const satisfies readonly RouteDeclaration[];
