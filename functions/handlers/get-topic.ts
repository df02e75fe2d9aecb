import { type HttpDeps, httpHandler, lazyHttpHandler } from '../http/middleware.js';
import { toTopicBody } from '../topics/model.js';
import { getTopicRoute } from '../topics/routes.js';
import { getTopic, type TopicDeps } from '../topics/topics.js';
import { topicReadDeps } from '../wiring/topics.js';

/** GET /v1/topics/{id}: the topic; 404 when there is none. */
export const makeHandler = (deps: HttpDeps & Pick<TopicDeps, 'topics'>) =>
  httpHandler(deps, getTopicRoute, async ({ params }) => ({
    statusCode: 200,
    body: toTopicBody(await getTopic(deps, params.id ?? '')),
  }));

export const handler = lazyHttpHandler(() => makeHandler(topicReadDeps('get-topic')));
