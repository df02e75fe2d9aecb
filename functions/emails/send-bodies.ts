import * as z from 'zod/mini';
import { MAX_BATCH } from '../shared/limits.js';
import { templateRefSchema } from '../templates/model.js';
import { sendEmailSchema } from './email.js';

type Json = Record<string, unknown>;

/** A request schema as JSON Schema (what the document makes of a route's `body`), to build a body from. */
const inputJson = (schema: z.ZodMiniType): Json => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as Json;
  return rest;
};

/**
 * A send's body as the OpenAPI document describes it, in its two forms: its own content
 * (sendEmailSchema), or a template's (the same fields, `template` instead of html and text, and
 * `from` and `subject` taken from the template where left out: emails/accept-send.ts). A batch's
 * emails take no attachments.
 */
function sendBodies(inBatch: boolean): Json[] {
  const plain = inputJson(sendEmailSchema) as Json & { properties: Record<string, Json> };
  const { attachments, ...withoutFiles } = plain.properties;
  const properties: Record<string, Json> = inBatch
    ? withoutFiles
    : { ...withoutFiles, attachments: attachments as Json };
  const { html: _html, text: _text, ...rest } = properties;
  return [
    {
      ...plain,
      title: 'Send with its own content',
      properties,
      anyOf: [{ required: ['html'] }, { required: ['text'] }],
    },
    {
      ...plain,
      title: 'Send with a template',
      description:
        "`template` gives the bodies (its published version, rendered with `variables`), and `from`, `subject` and `reply_to` where the email leaves them out; `html` and `text` may not be given beside it. Ours and Resend's.",
      properties: { ...rest, template: inputJson(templateRefSchema) },
      required: ['to', 'template'],
    },
  ];
}

/** `POST /v1/emails`: one email, by its own content or a template's. */
export const sendBodyJsonSchema = (): Json => ({ anyOf: sendBodies(false) });

/** `POST /v1/emails/batch`: 1 to MAX_BATCH emails, each as a send takes it but without attachments. */
export const batchBodyJsonSchema = (): Json => ({
  type: 'array',
  minItems: 1,
  maxItems: MAX_BATCH,
  items: { anyOf: sendBodies(true) },
});
