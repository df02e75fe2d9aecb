import type { DomainDeps } from '../domains/domains.js';
import { verifyDomainRoute } from '../domains/routes.js';
import { type HttpDeps, lazyHttpHandler } from '../http/middleware.js';
import { domainApiDeps } from '../wiring.js';
import { makeHandler as makeGetDomain } from './get-domain.js';

/**
 * POST /v1/domains/{id}/verify: asks SES for the verification state now, instead of waiting for the
 * scheduled check, and returns the domain with it. Same work as GET /v1/domains/{id}; its own
 * function so each endpoint keeps its own route, permission, role and logs.
 */
export const makeHandler = (deps: HttpDeps & DomainDeps) => makeGetDomain(deps, verifyDomainRoute);

export const handler = lazyHttpHandler(() => makeHandler(domainApiDeps('verify-domain')));
