import { type ConsumerOptions, startConsumersHere } from './consumers.js';
import { partData, servePart } from './threads.js';

/** The consumers' thread (see startConsumersThread): starts them, then answers `idle` and `stop`. */
await servePart(async () => {
  const consumers = await startConsumersHere(partData<ConsumerOptions>());
  return { started: {}, methods: { idle: () => consumers.idle(), stop: () => consumers.stop() } };
});
