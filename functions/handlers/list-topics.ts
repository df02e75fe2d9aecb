import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { uuidPageQuerySchema } from '../shared/uuid-pages.js';
import { toTopicListed } from '../topics/model.js';
import { listTopicsRoute } from '../topics/routes.js';
import { listTopics, type TopicDeps } from '../topics/topics.js';
import { topicReadDeps } from '../wiring/topics.js';

/** GET /v1/topics: `{object: "list", has_more, data}`, newest first. */
export const makeHandler = (deps: HttpDeps & Pick<TopicDeps, 'topics'>) =>
  httpHandler(deps, listTopicsRoute, async ({ query }) => {
    const page = await listTopics(deps, parseInput(uuidPageQuerySchema, query));
    return {
      statusCode: 200,
      body: { object: 'list', has_more: page.has_more, data: page.data.map(toTopicListed) },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(topicReadDeps('list-topics')));
