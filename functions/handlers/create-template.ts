import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createTemplateSchema } from '../templates/model.js';
import { createTemplateRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { createTemplate } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** POST /v1/templates: a draft template; 201 `{id, object: "template"}` as Resend answers. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, createTemplateRoute, async ({ body }) => {
    const template = await createTemplate(deps, parseInput(createTemplateSchema, body));
    return { statusCode: 201, body: { id: template.id, object: 'template' } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('create-template', { templates: templateRepository })),
);
