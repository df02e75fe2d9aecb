import { templateRepository } from '../adapters/dynamodb/repositories.js';
import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { listTemplatesQuerySchema, toTemplateListItem } from '../templates/model.js';
import { listTemplatesRoute } from '../templates/routes.js';
import type { TemplateDeps } from '../templates/templates.js';
import { apiDeps } from '../wiring.js';

/** GET /v1/templates?limit&after&before: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & TemplateDeps) =>
  httpHandler(deps, listTemplatesRoute, async ({ query }) => {
    const page = await deps.templates.list(parseInput(listTemplatesQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toTemplateListItem) },
    };
  });

export const handler = lazyHttpHandler(() =>
  makeHandler(apiDeps('list-templates', { templates: templateRepository })),
);
