import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { updateTopicSchema } from '../topics/model.js';
import { updateTopicRoute } from '../topics/routes.js';
import { type TopicDeps, updateTopic } from '../topics/topics.js';
import { topicWriteDeps } from '../wiring/topics.js';

/**
 * PATCH /v1/topics/{id}: `name`, `description`, `visibility`; a different `default_subscription`
 * is a 400. Answers `{object: "topic", id}`.
 */
export const makeHandler = (deps: HttpDeps & TopicDeps) =>
  httpHandler(deps, updateTopicRoute, async ({ params, body }) => {
    const topic = await updateTopic(deps, params.id ?? '', parseInput(updateTopicSchema, body));
    return { statusCode: 200, body: { object: 'topic', id: topic.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(topicWriteDeps('update-topic')));
