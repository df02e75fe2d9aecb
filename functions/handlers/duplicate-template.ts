import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { duplicateTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { duplicateTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** POST /v1/templates/{id or alias}/duplicate: a new draft with its content; `{id, object}`. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, duplicateTemplateRoute, async ({ params }) => {
    const template = await duplicateTemplate(deps, params.id ?? '');
    return { statusCode: 200, body: { id: template.id, object: 'template' } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('duplicate-template', { templates: templateRepository })),
);
