import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { publishTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { publishTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** POST /v1/templates/{id or alias}/publish: the current version is what sends use from now on. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, publishTemplateRoute, async ({ params }) => {
    const template = await publishTemplate(deps, params.id ?? '');
    return { statusCode: 200, body: { id: template.id, object: 'template' } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('publish-template', { templates: templateRepository })),
);
