import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { createTemplateSchema } from '../core/templates.js';
import type { TemplateDeps } from '../core/use-cases/templates.js';
import { createTemplate } from '../core/use-cases/templates.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { apiDeps } from '../wiring.js';

/** POST /v1/templates: a draft template; 201 `{id, object: "template"}` as Resend answers. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, { route: 'create-template', jsonBody: true }, async ({ body }) => {
    const template = await createTemplate(deps, parseInput(createTemplateSchema, body));
    return { statusCode: 201, body: { id: template.id, object: 'template' } };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('create-template', { templates: templateRepository })),
);
