import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { deleteTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { deleteTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** DELETE /v1/templates/{id or alias}: gone for new sends; emails accepted keep what was rendered. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, deleteTemplateRoute, async ({ params }) => {
    const template = await deleteTemplate(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'template', id: template.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('delete-template', { templates: templateRepository })),
);
