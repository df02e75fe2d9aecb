import type { RouteDeclaration } from '../shared/route.js';

/** The contact-imports routes (issue 40; shared/route.ts says what a declaration holds). */
export const CONTACT_IMPORT_ROUTES = [] as const satisfies readonly RouteDeclaration[];
