import type { RouteDeclaration } from '../shared/route.js';

/** The topics routes (issue 40; shared/route.ts says what a declaration holds). */
export const TOPIC_ROUTES = [] as const satisfies readonly RouteDeclaration[];
