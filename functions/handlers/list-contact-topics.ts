import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { uuidPageQuerySchema } from '../shared/uuid-pages.js';
import { listContactTopicsRoute } from '../topics/routes.js';
import { type ContactTopicDeps, contactTopics } from '../topics/topics.js';
import { topicReadDeps } from '../wiring/topics.js';

/**
 * GET /v1/contacts/{id}/topics (by id or address): every topic, newest first, with the
 * contact's subscription (its choice, else the topic's default).
 */
export const makeHandler = (deps: HttpDeps & Pick<ContactTopicDeps, 'topics' | 'audience'>) =>
  httpHandler(deps, listContactTopicsRoute, async ({ params, query }) => {
    const page = await contactTopics(deps, params.id ?? '', parseInput(uuidPageQuerySchema, query));
    return { statusCode: 200, body: { object: 'list', ...page } };
  });

export const handler = lazyHttpHandler(() => makeHandler(topicReadDeps('list-contact-topics')));
