import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { updateTemplateSchema } from '../templates/model.js';
import { updateTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { updateTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** PATCH /v1/templates/{id or alias}: what is given changes; `{id, object: "template"}`. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, updateTemplateRoute, async ({ params, body }) => {
    const template = await updateTemplate(deps, params.id ?? '', parseInput(updateTemplateSchema, body));
    return { statusCode: 200, body: { id: template.id, object: 'template' } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('update-template', { templates: templateRepository })),
);
