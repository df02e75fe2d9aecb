/**
 * Bundled IN PLACE OF `@smithy/core/event-streams` (an esbuild alias, lib/bundling.ts). Event
 * streams are a protocol feature of a few operations (S3 SelectObjectContent, Bedrock, Transcribe,
 * ...): none of the operations these functions call (DynamoDB, SQS, SES v2, S3 Get/Put/Head/
 * multipart, presigned GETs) has one, and the SDK loads the real module only when an operation's
 * schema has an event-stream member. S3's client still wires a marshaller at construction, so this
 * gives it one that refuses to work; anything that does reach for event streams fails loudly.
 *
 * Exports every name the bundled SDK imports from the real module (test/unit/bundling.test.ts).
 */
const refuse = (): never => {
  throw new Error(
    'Event streams are left out of this bundle (lib/bundling.ts aliases @smithy/core/event-streams): ' +
      'an operation with an event stream needs the alias removed.',
  );
};

/** What S3's client calls with its config at construction: a marshaller that refuses to work. */
export const eventStreamSerdeProvider = (_options?: unknown) => ({ serialize: refuse, deserialize: refuse });

/** As the real one: the config, with the marshaller of its provider. */
export const resolveEventStreamSerdeConfig = <T extends { eventStreamSerdeProvider: (input: T) => unknown }>(
  input: T,
) =>
  Object.assign(input, {
    eventStreamMarshaller: input.eventStreamSerdeProvider(input) as ReturnType<T['eventStreamSerdeProvider']>,
  });

/** What a protocol loads (by dynamic import) to serialize an event stream: refuses. */
export class EventStreamSerde {
  constructor(_options?: unknown) {
    refuse();
  }
}
