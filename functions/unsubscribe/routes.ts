import type { RouteDeclaration } from '../shared/route.js';

/** The unsubscribe routes (issue 40; shared/route.ts says what a declaration holds). */
export const UNSUBSCRIBE_ROUTES = [] as const satisfies readonly RouteDeclaration[];
