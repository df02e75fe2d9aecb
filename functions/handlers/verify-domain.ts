/**
 * POST /v1/domains/{id}/verify: asks SES for the verification state now, instead of waiting for the
 * scheduled check, and returns the domain with it. Same work as GET /v1/domains/{id}; its own
 * function so each endpoint keeps its own route, role and logs.
 */
export { handler, makeHandler } from './get-domain.js';
