import { describe, expect, it } from 'vitest';
import { mergeTagsIn, renderForContact, unknownMergeTags } from '../../functions/broadcasts/merge-tags.js';
import type { ContactProperty } from '../../functions/contacts/contact.js';

const company: ContactProperty = {
  id: 'p1',
  key: 'company',
  type: 'string',
  fallback_value: 'your company',
  created_at: '2026-11-28T00:00:00.000Z',
};
const ada = {
  email: 'Ada@example.com',
  first_name: 'Ada',
  last_name: null,
  props: { p1: 'Analytical & Co' },
};
const nameless = { email: 'bob@example.com', first_name: null, last_name: null, props: {} };
const url = 'https://mail.example.com/unsubscribe/tok';

describe("a broadcast's merge tags", () => {
  it("fills the contact's fields and properties, their fallbacks, and its own unsubscribe link", () => {
    const parts = {
      subject: 'Hi {{{contact.first_name|there}}}',
      html: '<p>{{{FIRST_NAME|friend}}} at {{{contact.company}}} <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">x</a> {{{contact.last_name|}}}</p>',
      text: '{{{EMAIL}}} / {{{ contact.company | Acme }}}',
    };
    expect(renderForContact(parts, ada, [company], url)).toEqual({
      subject: 'Hi Ada',
      html: `<p>Ada at Analytical &amp; Co <a href="${url}">x</a> </p>`,
      text: 'Ada@example.com / Analytical & Co',
    });
    expect(renderForContact(parts, nameless, [company], url)).toEqual({
      subject: 'Hi there',
      html: `<p>friend at your company <a href="${url}">x</a> </p>`,
      text: 'bob@example.com / Acme',
    });
  });
  it('escapes values in HTML only, and keeps the subject on one line', () => {
    const evil = { ...nameless, first_name: '<script>x</script>\r\nBcc: a@b' };
    const out = renderForContact(
      { subject: '{{{FIRST_NAME}}}', html: '{{{FIRST_NAME}}}', text: null },
      evil,
      [],
      url,
    );
    expect(out.html).toBe('&lt;script&gt;x&lt;/script&gt;\r\nBcc: a@b');
    expect(out.subject).toBe('<script>x</script> Bcc: a@b');
  });
  it('names the tags that name nothing, and leaves them as written', () => {
    const parts = { subject: '{{{contact.plan}}}', html: '{{{NAME}}} {{{contact.company}}}', text: null };
    expect(mergeTagsIn(parts)).toEqual(['contact.plan', 'NAME', 'contact.company']);
    expect(unknownMergeTags(parts, [company])).toEqual(['contact.plan', 'NAME']);
    expect(renderForContact(parts, ada, [company], url).subject).toBe('{{{contact.plan}}}');
  });
});
