import { type HttpDeps, httpHandler, lazyHttpHandler, parseInput } from '../http/middleware.js';
import { updateContactTopicsSchema } from '../topics/model.js';
import { updateContactTopicsRoute } from '../topics/routes.js';
import { type ContactTopicDeps, updateContactTopics } from '../topics/topics.js';
import { topicWriteDeps } from '../wiring/topics.js';

/**
 * PATCH /v1/contacts/{id}/topics (by id or address): `{topics: [{id, subscription}]}`, or
 * that list alone (SDK 6.38's body). The topics not named keep their choice.
 */
export const makeHandler = (deps: HttpDeps & ContactTopicDeps) =>
  httpHandler(deps, updateContactTopicsRoute, async ({ params, body }) => {
    const { contactId, topics } = await updateContactTopics(
      deps,
      params.id ?? '',
      parseInput(updateContactTopicsSchema, body),
    );
    return {
      statusCode: 200,
      body: { object: 'contact_topics', id: contactId, contact_id: contactId, topics },
    };
  });

export const handler = lazyHttpHandler(() => makeHandler(topicWriteDeps('update-contact-topics')));
