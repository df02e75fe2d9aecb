import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { createTopicSchema } from '../topics/model.js';
import { createTopicRoute } from '../topics/routes.js';
import { createTopic, type TopicDeps } from '../topics/topics.js';
import { topicWriteDeps } from '../wiring/topics.js';

/** POST /v1/topics: a new topic (`visibility` private unless given); 201 with `{object: "topic", id}`. */
export const makeHandler = (deps: HttpDeps & TopicDeps) =>
  httpHandler(deps, createTopicRoute, async ({ body }) => {
    const topic = await createTopic(deps, parseInput(createTopicSchema, body));
    return { statusCode: 201, body: { object: 'topic', id: topic.id } };
  });

export const handler = lazyHttpHandler(() => makeHandler(topicWriteDeps('create-topic')));
