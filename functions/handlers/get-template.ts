import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toTemplateBody } from '../templates/model.js';
import { getTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { findTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/templates/{id or alias}: the template, its current version. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, getTemplateRoute, async ({ params }) => ({
    statusCode: 200,
    body: toTemplateBody(await findTemplate(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('get-template', { templates: templateRepository })),
);
