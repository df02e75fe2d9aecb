import type { RouteDeclaration } from '../shared/route.js';

/** The contact-properties routes (issue 40; shared/route.ts says what a declaration holds). */
export const CONTACT_PROPERTY_ROUTES = [] as const satisfies readonly RouteDeclaration[];
