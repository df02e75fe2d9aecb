/**
 * Templates end to end, over HTTPS with the official `resend` SDK against `npm start`: create,
 * read by alias, publish, send by template (alone and in a batch), edit and publish again,
 * duplicate, list, remove; the rendered message compared in the local SES store, every answer
 * checked against Resend's own document.
 */

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSdkProgram } from '../support/npm-start.js';
import { expectResendShape } from '../support/resend-schema.js';

// biome-ignore lint/suspicious/noExplicitAny: what the SDK answered, read back from JSON
let seen: Record<string, any>;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ seen, stop } = await runSdkProgram('test/e2e/sdk/templates-user.ts'));
}, 150_000);
afterAll(() => stop?.());

const stored = (subject: string) => seen.stored.filter((m: { subject: string }) => m.subject === subject);

describe('templates with the official resend SDK, against npm start', () => {
  it('creates a draft, read back by its alias in Resend shapes; a draft does not send', () => {
    expectResendShape(seen.created, 'CreateTemplateResponseSuccess');
    expect(seen.draft).toMatchObject({
      object: 'template',
      id: seen.created.id,
      alias: 'welcome',
      status: 'draft',
      published_at: null,
      has_unpublished_versions: true,
      variables: [
        expect.objectContaining({ key: 'NAME', type: 'string' }),
        expect.objectContaining({ key: 'PLAN', type: 'string', fallback_value: 'Free' }),
      ],
    });
    expectResendShape(seen.draft, 'Template');
    expect(seen.unpublishedSend.data).toBeNull();
    expect(seen.unpublishedSend.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(seen.unpublishedSend.error.message).toContain('publish');
    expectResendShape(seen.published, 'PublishTemplateResponseSuccess');
  });

  it('sends by template: from and subject from it, the value escaped in HTML and as given in the text, the fallback used, the template recorded', () => {
    const email = seen.first;
    expect(email).toMatchObject({
      from: 'Acme <hello@tpl.test>',
      subject: 'Welcome, <Ann & "Bob">',
      html: '<p>Hi &lt;Ann &amp; &quot;Bob&quot;&gt;, you are on Free.</p>',
      text: 'Hi <Ann & "Bob">, you are on Free.',
      template_id: seen.created.id,
    });
    expectResendShape(email, 'Email');
    // What the local SES received is what was rendered.
    expect(stored('Welcome, <Ann & "Bob">')).toEqual([
      {
        subject: 'Welcome, <Ann & "Bob">',
        html: '<p>Hi &lt;Ann &amp; &quot;Bob&quot;&gt;, you are on Free.</p>',
        text: 'Hi <Ann & "Bob">, you are on Free.',
      },
    ]);
  });

  it('refuses a missing variable and template beside html, as validation errors naming them', () => {
    expect(seen.missing.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(seen.missing.error.message).toContain('NAME');
    expect(seen.exclusive.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect(seen.exclusive.error.message).toContain('html');
  });

  it('an edit is a new version; sends keep the published one until the next publish', () => {
    expect(seen.edited).toMatchObject({ status: 'published', has_unpublished_versions: true });
    expect(seen.edited.current_version_id).not.toBe(seen.draft.current_version_id);
    expect(seen.stillPublished.html).toBe('<p>Hi Cy, you are on Free.</p>');
    expect(seen.republished.html).toBe('<p>Hello again Di</p>');
    expect(seen.republished.template_version_id).not.toBe(seen.stillPublished.template_version_id);
  });

  it('sends a batch by template, by id and by alias', () => {
    expect(seen.batch.map((e: { html: string; template_id: string }) => [e.html, e.template_id])).toEqual([
      ['<p>Hello again Eve</p>', seen.created.id],
      ['<p>Hello again Fay</p>', seen.created.id],
    ]);
  });

  it('duplicates, lists and removes, in Resend shapes', () => {
    expect(seen.copy).toMatchObject({
      name: 'Welcome (copy)',
      status: 'draft',
      html: '<p>Hello again {{{NAME}}}</p>',
    });
    expect(seen.copy.alias).toBeUndefined();
    expectResendShape(seen.list, 'ListTemplatesResponseSuccess');
    expect(seen.list.data.map((t: { id: string }) => t.id)).toEqual([seen.copy.id, seen.created.id]);
    expect(seen.removed).toEqual({ object: 'template', id: seen.copy.id, deleted: true });
    expectResendShape(seen.removed, 'RemoveTemplateResponseSuccess');
    expect(seen.gone.error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  it('email.sent carries the template id, signed', () => {
    const verifier = new Webhook(seen.signingSecret);
    const sent = seen.hooks
      .map((h: { headers: Record<string, string>; body: string }) => verifier.verify(h.body, h.headers))
      .find((e: { data: { template_id?: string } }) => e.data.template_id);
    expect(sent).toMatchObject({ type: 'email.sent', data: { template_id: seen.created.id } });
    expectResendShape(sent, 'EmailSentEvent');
  });
});
