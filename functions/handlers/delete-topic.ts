import type { AudienceCleanup } from '../contacts/cleanup-jobs.js';
import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { deleteTopicRoute } from '../topics/routes.js';
import { deleteTopic, type TopicDeps } from '../topics/topics.js';
import { deleteTopicDeps } from '../wiring/topics.js';

/** DELETE /v1/topics/{id}: the topic now, its contacts' choices off the request path. */
export const makeHandler = (deps: HttpDeps & TopicDeps & { cleanup: AudienceCleanup }) =>
  httpHandler(deps, deleteTopicRoute, async ({ params }) => {
    const topic = await deleteTopic(deps, params.id ?? '');
    return { statusCode: 200, body: { object: 'topic', id: topic.id, deleted: true } };
  });

export const handler = lazyHttpHandler(() => makeHandler(deleteTopicDeps()));
