import { afterEach, describe, expect, it, vi } from 'vitest';
import { niceMax } from '../../console/src/chart-scale.js';
import {
  bodyOf,
  emptyForm,
  previewOf,
  problemsOf,
  type TemplateForm,
  typedValue,
  undeclaredOf,
} from '../../console/src/template-form.js';

/**
 * The console's template form: what it sends the API, what it says before saving, and its preview,
 * rendered in the browser by the service's renderer (which must then need no Node global).
 */
const form = (change: Partial<TemplateForm>): TemplateForm => ({
  ...emptyForm(),
  name: 'Welcome',
  ...change,
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the template form', () => {
  it('reads a typed value: strings as they are, other types as JSON, and says what is wrong', () => {
    expect(typedValue('string', ' 42 ')).toEqual({ value: ' 42 ' });
    expect(typedValue('number', '42')).toEqual({ value: 42 });
    expect(typedValue('number', 'forty')).toEqual({ problem: 'must be a number, like 42' });
    expect(typedValue('boolean', 'true')).toEqual({ value: true });
    expect(typedValue('boolean', 'yes')).toEqual({ problem: 'must be true or false' });
    expect(typedValue('object', '{"plan":"pro"}')).toEqual({ value: { plan: 'pro' } });
    expect(typedValue('list', '[1,')).toHaveProperty('problem');
    expect(typedValue('number', '')).toEqual({});
  });

  it('sends emptied fields as null (removed on a change), and fallbacks typed', () => {
    const body = bodyOf(
      form({
        html: '<p>{{{N}}}</p>',
        replyTo: 'a@acme.test, b@acme.test',
        variables: [{ key: 'N', type: 'number', fallback: '7', sample: '9' }],
      }),
    );
    expect(body).toEqual({
      name: 'Welcome',
      alias: null,
      from: null,
      subject: null,
      reply_to: ['a@acme.test', 'b@acme.test'],
      html: '<p>{{{N}}}</p>',
      text: null,
      variables: [{ key: 'N', type: 'number', fallback_value: 7 }],
    });
  });

  it('names undeclared placeholders and unreadable fallbacks before saving', () => {
    const f = form({
      subject: 'Hi {{{NAME}}}',
      html: '<p>{{{NAME}}} {{{N}}}</p>',
      variables: [{ key: 'N', type: 'number', fallback: 'x', sample: '' }],
    });
    expect(undeclaredOf(f)).toEqual(['NAME']);
    expect(problemsOf(f)).toEqual([
      'The fallback value of N must be a number, like 42.',
      expect.stringMatching(/^The subject uses \{\{\{NAME\}\}\}, which is not declared/),
      expect.stringMatching(/^The HTML uses \{\{\{NAME\}\}\}, which is not declared/),
    ]);
  });

  it('previews with the samples, else the fallbacks, escaping values in the HTML as a send does', () => {
    const f = form({
      subject: 'Hi {{{NAME}}}',
      html: '<p>{{{NAME}}} on {{{PLAN}}}</p>',
      text: '{{{NAME}}}',
      variables: [
        { key: 'NAME', type: 'string', fallback: '', sample: '<b>Ada</b>' },
        { key: 'PLAN', type: 'string', fallback: 'free', sample: '' },
      ],
    });
    expect(previewOf(f)).toEqual({
      ok: true,
      subject: 'Hi <b>Ada</b>',
      html: '<p>&lt;b&gt;Ada&lt;/b&gt; on free</p>',
      text: '<b>Ada</b>',
    });
    const lacking = previewOf({ ...f, variables: f.variables.map((v) => ({ ...v, sample: '' })) });
    expect(lacking).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^NAME has no value .*give a sample value or a fallback value\.$/)],
    });
  });

  it('renders without Node’s Buffer, which a browser does not have', () => {
    vi.stubGlobal('Buffer', undefined);
    const preview = previewOf(
      form({ html: '<p>{{{N}}}</p>', variables: [{ key: 'N', type: 'string', fallback: '', sample: 'é' }] }),
    );
    expect(preview).toMatchObject({ ok: true, html: '<p>é</p>' });
  });
});

describe("the charts' scale", () => {
  it('tops the axis at 1, 2 or 5 times a power of ten, at least the largest value', () => {
    expect([0, 1, 3, 7, 10, 11, 180, 2001].map(niceMax)).toEqual([1, 1, 5, 10, 10, 20, 200, 5000]);
  });
});
