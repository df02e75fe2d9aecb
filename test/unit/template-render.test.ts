import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../../functions/shared/errors.js';
import {
  checkTemplate,
  MAX_TEMPLATE_VARIABLES,
  RESERVED_VARIABLE_NAMES,
  renderTemplate,
  type TemplateParts,
  type TemplateVariableInput,
  usedVariables,
  VARIABLE_KEY,
  VARIABLE_TYPES,
  type VariableType,
} from '../../functions/templates/render.js';
import { hostileString } from '../support/arbitraries.js';

const variable = (key: string, type: VariableType = 'string', fallback?: unknown): TemplateVariableInput =>
  fallback === undefined ? { key, type } : { key, type, fallback_value: fallback };

/** The rendering, which must have succeeded. */
function rendered(...args: Parameters<typeof renderTemplate>) {
  const result = renderTemplate(...args);
  if (!result.ok) throw new Error(`expected a rendering, got ${JSON.stringify(result.errors)}`);
  return result;
}

/** The errors, which there must be. */
function refused(...args: Parameters<typeof renderTemplate>): FieldError[] {
  const result = renderTemplate(...args);
  if (result.ok) throw new Error(`expected errors, got ${JSON.stringify(result)}`);
  return result.errors;
}

/** One value rendered into HTML, text and subject. */
const renderOne = (type: VariableType, value: unknown) =>
  rendered({ subject: 'S {{{V}}}', html: '<p>{{{V}}}</p>', text: 'T {{{V}}}' }, [variable('V', type)], {
    V: value,
  });

const KB100 = 100 * 1024;

/** An independent reference of the escaping: `&` first, then the rest. */
const escapeReference = (s: string) =>
  s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
    .replaceAll('`', '&#96;');

const validKey = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,49}$/)
  .filter((k) => !RESERVED_VARIABLE_NAMES.includes(k));

describe('the exported constants', () => {
  it('lists the five types, the limit of 50 and the six reserved names', () => {
    expect(VARIABLE_TYPES).toEqual(['string', 'number', 'boolean', 'object', 'list']);
    expect(MAX_TEMPLATE_VARIABLES).toBe(50);
    expect([...RESERVED_VARIABLE_NAMES].sort()).toEqual(
      ['EMAIL', 'FIRST_NAME', 'LAST_NAME', 'UNSUBSCRIBE_URL', 'contact', 'this'].sort(),
    );
  });

  it.each(['a', '_', '_a1', 'ORDER_ID', '1ST', 'x'.repeat(50)])('VARIABLE_KEY accepts %j', (key) => {
    expect(VARIABLE_KEY.test(key)).toBe(true);
  });

  it.each(['', 'a-b', 'a b', 'a.b', 'é', 'x'.repeat(51), 'a\n'])('VARIABLE_KEY refuses %j', (key) => {
    expect(VARIABLE_KEY.test(key)).toBe(false);
  });
});

describe('usedVariables', () => {
  it('lists each name once, in order of first use over subject, HTML and text', () => {
    const parts = {
      subject: 'Hi {{{B}}}',
      html: '<p>{{{A}}} {{{ B }}} {{{A}}}</p>',
      text: '{{{C}}} {{{A}}}',
    };
    expect(usedVariables(parts)).toEqual(['B', 'A', 'C']);
  });

  it('takes spaces inside the braces, and not two braces', () => {
    expect(usedVariables({ html: '{{{  X\t}}} {{Y}} {Z} {{{ W}}}' })).toEqual(['X', 'W']);
  });

  it('reports names that are not valid keys, so they can be refused', () => {
    expect(usedVariables({ html: '{{{first-name}}} {{{contact.email}}}' })).toEqual([
      'first-name',
      'contact.email',
    ]);
  });

  it('takes a missing or null subject and text', () => {
    expect(usedVariables({ subject: null, html: '{{{A}}}', text: null })).toEqual(['A']);
    expect(usedVariables({ html: 'none' })).toEqual([]);
  });
});

describe('checkTemplate', () => {
  it('accepts a template that declares what it uses, with fallbacks of each type', () => {
    const parts = {
      subject: 'Order {{{ORDER}}}',
      html: '{{{NAME}}} {{{COUNT}}} {{{VIP}}} {{{ITEM}}} {{{ITEMS}}}',
      text: '{{{NAME}}}',
    };
    const variables = [
      variable('ORDER'),
      variable('NAME', 'string', 'there'),
      variable('COUNT', 'number', 3.5),
      variable('VIP', 'boolean', false),
      variable('ITEM', 'object', { a: [1, null, 'x'] }),
      variable('ITEMS', 'list', [{ b: true }]),
      variable('UNUSED', 'string', null),
    ];
    expect(checkTemplate(parts, variables)).toEqual([]);
  });

  it.each(['', 'first-name', 'a b', 'x'.repeat(51), 'naïve'])('refuses the key %j', (key) => {
    const errors = checkTemplate({ html: '' }, [variable('OK'), variable(key)]);
    expect(errors).toEqual([{ field: 'variables.1.key', message: expect.stringContaining(`"${key}"`) }]);
  });

  it('refuses a key that is not a string', () => {
    const errors = checkTemplate({ html: '' }, [
      { key: 7, type: 'string' } as unknown as TemplateVariableInput,
    ]);
    expect(errors).toEqual([{ field: 'variables.0.key', message: expect.any(String) }]);
  });

  it.each([...RESERVED_VARIABLE_NAMES])('refuses the reserved name %s as a key', (key) => {
    const errors = checkTemplate({ html: '' }, [variable(key)]);
    expect(errors).toEqual([{ field: 'variables.0.key', message: expect.stringMatching(/reserved/) }]);
    expect(errors[0]?.message).toContain(key);
  });

  it('refuses a key declared twice, at its second place', () => {
    const errors = checkTemplate({ html: '{{{A}}}' }, [
      variable('A'),
      variable('B'),
      variable('A', 'number'),
    ]);
    expect(errors).toEqual([{ field: 'variables.2.key', message: expect.stringMatching(/"A".*twice/) }]);
  });

  it('refuses a type outside the five', () => {
    const errors = checkTemplate({ html: '' }, [
      { key: 'A', type: 'date' } as unknown as TemplateVariableInput,
    ]);
    expect(errors).toEqual([{ field: 'variables.0.type', message: expect.stringContaining('A') }]);
  });

  it.each<[VariableType, unknown, RegExp]>([
    ['string', 42, /string/],
    ['string', true, /string/],
    ['number', '42', /number/],
    ['number', Number.NaN, /number/],
    ['number', Number.POSITIVE_INFINITY, /number/],
    ['boolean', 'true', /true or false/],
    ['boolean', 1, /true or false/],
    ['object', [], /object/],
    ['object', 'x', /object/],
    ['object', new Date(0), /object/],
    ['list', {}, /list/],
    ['list', 'a,b', /list/],
  ])('refuses for type %s the fallback %o', (type, fallback, expected) => {
    const errors = checkTemplate({ html: '{{{V}}}' }, [variable('V', type, fallback)]);
    expect(errors).toEqual([
      { field: 'variables.0.fallback_value', message: expect.stringMatching(expected) },
    ]);
    expect(errors[0]?.message).toContain('V');
  });

  it('refuses a fallback that JSON cannot carry, or nested too deep', () => {
    const deep = (levels: number): unknown => (levels === 0 ? 1 : [deep(levels - 1)]);
    const fields = (fallback: unknown, type: VariableType = 'object') =>
      checkTemplate({ html: '' }, [variable('V', type, fallback)]).map((e) => e.field);
    expect(fields({ a: undefined })).toEqual(['variables.0.fallback_value']);
    expect(fields({ a: () => 1 })).toEqual(['variables.0.fallback_value']);
    expect(fields({ a: new Map() })).toEqual(['variables.0.fallback_value']);
    expect(fields({ a: [Number.NaN] })).toEqual(['variables.0.fallback_value']);
    // biome-ignore lint/suspicious/noSparseArray: a hole is what this checks
    expect(fields([1, , 3], 'list')).toEqual(['variables.0.fallback_value']);
    expect(fields(deep(64), 'list')).toEqual([]);
    expect(fields(deep(65), 'list')).toEqual(['variables.0.fallback_value']);
  });

  it('refuses a fallback over 100 KB once written', () => {
    const fields = (fallback: unknown, type: VariableType) =>
      checkTemplate({ html: '' }, [variable('V', type, fallback)]).map((e) => e.field);
    expect(fields('x'.repeat(KB100), 'string')).toEqual([]);
    expect(fields('x'.repeat(KB100 + 1), 'string')).toEqual(['variables.0.fallback_value']);
    expect(fields(['x'.repeat(KB100)], 'list')).toEqual(['variables.0.fallback_value']);
  });

  it('refuses a fallback with a line break only when the subject uses it', () => {
    const variables = [variable('V', 'string', 'a\r\nBcc: x@evil.test')];
    expect(checkTemplate({ html: '{{{V}}}', text: '{{{V}}}' }, variables)).toEqual([]);
    expect(checkTemplate({ subject: 'Hi {{{V}}}', html: '' }, variables)).toEqual([
      { field: 'variables.0.fallback_value', message: expect.stringMatching(/V.*line breaks/) },
    ]);
  });

  it('takes 50 variables and refuses 51', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => variable(`V${i}`));
    expect(checkTemplate({ html: '' }, keys(50))).toEqual([]);
    expect(checkTemplate({ html: '' }, keys(51))).toEqual([
      { field: 'variables', message: expect.stringContaining('50') },
    ]);
  });

  it('refuses a name used in a part and not declared, naming the part and the name', () => {
    const errors = checkTemplate(
      { subject: '{{{ S }}}', html: '{{{H}}} {{{H}}} {{{OK}}}', text: '{{{T}}}' },
      [variable('OK')],
    );
    expect(errors).toEqual([
      { field: 'subject', message: expect.stringContaining('{{{S}}}') },
      { field: 'html', message: expect.stringContaining('{{{H}}}') },
      { field: 'text', message: expect.stringContaining('{{{T}}}') },
    ]);
  });

  it('refuses placeholders with an invalid or reserved name', () => {
    const errors = checkTemplate({ html: '{{{first-name}}} {{{EMAIL}}}' }, []);
    expect(errors).toEqual([
      { field: 'html', message: expect.stringMatching(/first-name.*not a valid variable name/) },
      { field: 'html', message: expect.stringMatching(/EMAIL.*reserved/) },
    ]);
  });

  it('does not take two braces as a use', () => {
    expect(checkTemplate({ html: '{{NAME}} {NAME}', text: '{{ NAME }}' }, [])).toEqual([]);
  });

  it('gives its errors in a fixed order: count, variables in order, then subject, HTML, text', () => {
    const variables = [
      ...Array.from({ length: 49 }, (_, i) => variable(`V${i}`)),
      variable('this'),
      variable('V0', 'number', 'x'),
    ];
    const parts = { text: '{{{Z}}}', html: '{{{Y}}} {{{X}}}', subject: '{{{W}}}' };
    expect(checkTemplate(parts, variables).map((e) => e.field)).toEqual([
      'variables',
      'variables.49.key',
      'variables.50.key',
      'variables.50.fallback_value',
      'subject',
      'html',
      'html',
      'text',
    ]);
    expect(checkTemplate(parts, variables)).toEqual(checkTemplate(parts, variables));
  });
});

describe('renderTemplate', () => {
  it('fills the subject, HTML and text, with spaces inside the braces', () => {
    const result = rendered(
      {
        subject: 'Order {{{ ID }}}',
        html: '<b>{{{ID}}}</b> for {{{  NAME  }}}',
        text: '{{{ID}}}/{{{NAME}}}',
      },
      [variable('ID'), variable('NAME')],
      { ID: 'A-1', NAME: 'Ann' },
    );
    expect(result).toEqual({ ok: true, subject: 'Order A-1', html: '<b>A-1</b> for Ann', text: 'A-1/Ann' });
  });

  it('leaves out the subject and text the template does not have', () => {
    expect(rendered({ html: '{{{A}}}' }, [variable('A')], { A: 'x' })).toStrictEqual({ ok: true, html: 'x' });
    expect(rendered({ subject: null, html: 'h', text: null }, [], {})).toStrictEqual({ ok: true, html: 'h' });
  });

  it('escapes the six characters in HTML, and writes subject and text as is', () => {
    const value = `<script>alert("x" & 'y' \`z\`)</script>`;
    expect(renderOne('string', value)).toEqual({
      ok: true,
      subject: `S ${value}`,
      html: '<p>&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39; &#96;z&#96;)&lt;/script&gt;</p>',
      text: `T ${value}`,
    });
  });

  it('does not escape the template itself, only the values', () => {
    const result = rendered({ html: '<a href="?a=1&b=2">{{{A}}}</a>' }, [variable('A')], { A: '&' });
    expect(result.html).toBe('<a href="?a=1&b=2">&amp;</a>');
  });

  it.each<[VariableType, unknown, string]>([
    ['number', 42, '42'],
    ['number', -1.5, '-1.5'],
    ['number', -0, '0'],
    ['number', 1e21, '1e+21'],
    ['number', 0.1 + 0.2, '0.30000000000000004'],
    ['boolean', true, 'true'],
    ['boolean', false, 'false'],
    ['object', { a: 1, b: [true, null] }, '{"a":1,"b":[true,null]}'],
    ['list', ['x', 2], '["x",2]'],
    ['list', [], '[]'],
    ['string', '', ''],
  ])('writes a %s %j as %s', (type, value, expected) => {
    const result = renderOne(type, value);
    expect(result.subject).toBe(`S ${expected}`);
    expect(result.text).toBe(`T ${expected}`);
    expect(result.html).toBe(`<p>${escapeReference(expected)}</p>`);
  });

  it('escapes the JSON of objects and lists in HTML', () => {
    expect(renderOne('object', { q: '<i>' }).html).toBe('<p>{&quot;q&quot;:&quot;&lt;i&gt;&quot;}</p>');
  });

  it('takes the fallback_value when a value is missing or null, and the value over it', () => {
    const variables = [variable('A', 'string', 'fa'), variable('B', 'number', 7)];
    const parts = { html: '{{{A}}} {{{B}}}' };
    expect(rendered(parts, variables, {}).html).toBe('fa 7');
    expect(rendered(parts, variables, { A: null, B: null }).html).toBe('fa 7');
    expect(rendered(parts, variables, { A: 'va', B: 0 }).html).toBe('va 0');
    expect(rendered(parts, variables, { A: '' }).html).toBe(' 7');
  });

  it('refuses a variable with neither a value nor a fallback, naming it', () => {
    const variables = [variable('A'), variable('B', 'string', null), variable('C', 'string', 'c')];
    expect(refused({ html: '{{{A}}}{{{B}}}{{{C}}}' }, variables, { B: null })).toEqual([
      { field: 'template.variables.A', message: expect.stringContaining('A') },
      { field: 'template.variables.B', message: expect.stringContaining('B') },
    ]);
  });

  it('looks up only the values given, not what every object inherits', () => {
    const variables = [variable('constructor'), variable('toString'), variable('__proto__')];
    expect(refused({ html: '' }, variables, {})).toEqual(
      ['constructor', 'toString', '__proto__'].map((key) => ({
        field: `template.variables.${key}`,
        message: expect.stringMatching(new RegExp(`^${key} has no value`)),
      })),
    );
    expect(rendered({ html: '{{{toString}}}' }, [variable('toString', 'string', 'fb')], {}).html).toBe('fb');
    const values = JSON.parse('{"constructor":"c","toString":"t","__proto__":"p"}');
    expect(rendered({ html: '{{{constructor}}}{{{toString}}}{{{__proto__}}}' }, variables, values).html).toBe(
      'ctp',
    );
  });

  it.each<[VariableType, unknown, RegExp]>([
    ['string', 42, /must be a string.*not a number/],
    ['string', ['a'], /must be a string.*not a list/],
    ['number', '42', /must be a finite number.*42 rather than "42"/],
    ['number', Number.NaN, /must be a finite number/],
    ['number', Number.NEGATIVE_INFINITY, /must be a finite number/],
    ['number', true, /must be a finite number.*not a boolean/],
    ['boolean', 'false', /must be true or false.*not a string/],
    ['boolean', 1, /must be true or false.*not a number/],
    ['object', [1], /must be an object.*not a list/],
    ['object', 'o', /must be an object.*not a string/],
    ['object', new Date(0), /must be an object/],
    ['object', new (class Thing {})(), /must be an object/],
    ['list', { 0: 'a' }, /must be a list.*not an object/],
    ['list', 'a', /must be a list.*not a string/],
  ])('refuses for type %s the value %o, naming the type expected', (type, value, expected) => {
    const errors = refused({ html: '{{{V}}}' }, [variable('V', type)], { V: value });
    expect(errors).toEqual([{ field: 'template.variables.V', message: expect.stringMatching(expected) }]);
    expect(errors[0]?.message).toMatch(/^V /);
  });

  it('refuses objects and lists that JSON cannot carry', () => {
    const fields = (type: VariableType, value: unknown) =>
      refused({ html: '{{{V}}}' }, [variable('V', type)], { V: value }).map((e) => e.field);
    expect(fields('object', { a: undefined })).toEqual(['template.variables.V']);
    expect(fields('object', { a: 1n })).toEqual(['template.variables.V']);
    expect(fields('object', { a: Symbol('s') })).toEqual(['template.variables.V']);
    expect(fields('list', [new Date(0)])).toEqual(['template.variables.V']);
    expect(fields('list', [{ b: [Number.POSITIVE_INFINITY] }])).toEqual(['template.variables.V']);
    const cycle: unknown[] = [];
    cycle.push(cycle);
    expect(fields('list', cycle)).toEqual(['template.variables.V']);
  });

  it('refuses a value for a name the template does not declare', () => {
    expect(refused({ html: '{{{A}}}' }, [variable('A')], { A: 'a', B: 'b', C: 1 })).toEqual([
      { field: 'template.variables.B', message: expect.stringContaining('B') },
      { field: 'template.variables.C', message: expect.stringContaining('C') },
    ]);
  });

  it('takes 50 values and refuses 51', () => {
    const variables = Array.from({ length: 50 }, (_, i) => variable(`V${i}`));
    const values = Object.fromEntries(variables.map((v) => [v.key, 'x']));
    expect(rendered({ html: '{{{V49}}}' }, variables, values).html).toBe('x');
    expect(refused({ html: '' }, variables, { ...values, EXTRA: 'x' })).toEqual([
      { field: 'template.variables', message: expect.stringContaining('50') },
    ]);
  });

  it.each(['a\nBcc: x@evil.test', 'a\r\nb', 'a\rb'])(
    'refuses the subject value %j with a line break, and takes it in HTML and text',
    (value) => {
      const variables = [variable('V')];
      expect(refused({ subject: 'Hi {{{V}}}', html: '' }, variables, { V: value })).toEqual([
        { field: 'template.variables.V', message: expect.stringMatching(/V.*line breaks/) },
      ]);
      const result = rendered({ subject: 'Hi', html: '{{{V}}}', text: '{{{V}}}' }, variables, { V: value });
      expect(result.text).toBe(value);
    },
  );

  it('refuses a fallback with a line break in the subject, naming it as the fallback', () => {
    expect(refused({ subject: '{{{V}}}', html: '' }, [variable('V', 'string', 'a\nb')], {})).toEqual([
      { field: 'template.variables.V', message: expect.stringMatching(/fallback_value of V.*line breaks/) },
    ]);
  });

  it('refuses a value over 100 KB once written, counting UTF-8 bytes', () => {
    const fields = (type: VariableType, value: unknown) => {
      const result = renderTemplate({ html: '{{{V}}}' }, [variable('V', type)], { V: value });
      return result.ok ? [] : result.errors.map((e) => e.field);
    };
    expect(fields('string', 'x'.repeat(KB100))).toEqual([]);
    expect(fields('string', 'x'.repeat(KB100 + 1))).toEqual(['template.variables.V']);
    expect(fields('string', 'é'.repeat(KB100 / 2))).toEqual([]);
    expect(fields('string', 'é'.repeat(KB100 / 2 + 1))).toEqual(['template.variables.V']);
    expect(fields('list', ['x'.repeat(KB100 - 4)])).toEqual([]);
    expect(fields('list', ['x'.repeat(KB100 - 3)])).toEqual(['template.variables.V']);
  });

  it('refuses a subject over 998 characters once filled in, counting code points', () => {
    const variables = [variable('V')];
    const parts = { subject: 'ab{{{V}}}', html: '' };
    expect(rendered(parts, variables, { V: 'x'.repeat(996) }).subject).toHaveLength(998);
    expect(rendered(parts, variables, { V: '💌'.repeat(996) }).subject).toHaveLength(2 + 2 * 996);
    expect(refused(parts, variables, { V: 'x'.repeat(997) })).toEqual([
      { field: 'subject', message: expect.stringContaining('998') },
    ]);
  });

  it('does not expand placeholders inside values', () => {
    const variables = [variable('A'), variable('B')];
    const parts = { subject: '{{{A}}}', html: '{{{A}}}|{{{B}}}', text: '{{{B}}}{{{A}}}' };
    expect(rendered(parts, variables, { A: '{{{B}}}', B: '{{{A}}}' })).toEqual({
      ok: true,
      subject: '{{{B}}}',
      html: '{{{B}}}|{{{A}}}',
      text: '{{{A}}}{{{B}}}',
    });
  });

  it('writes values with `$` patterns as they are', () => {
    const result = rendered({ subject: '{{{A}}}', html: '{{{A}}}' }, [variable('A')], { A: "$&$1$$$'$`" });
    expect(result.subject).toBe("$&$1$$$'$`");
    expect(result.html).toBe('$&amp;$1$$$&#39;$&#96;');
  });

  it('leaves everything else as written: two braces, undeclared placeholders, unbalanced braces', () => {
    const html = '{{A}} {{ A }} {A} {{{B}}} {{{A} {{{ }}} <p class="{{{">';
    expect(rendered({ html: `${html} {{{A}}}` }, [variable('A')], { A: 'x' }).html).toBe(`${html} x`);
  });

  it('gives its errors in a fixed order: declared variables in order, then unknown values as given', () => {
    const variables = [variable('A'), variable('B', 'number'), variable('C', 'string', 'x\ny')];
    const values = { Z: 1, B: 'b', Y: 2 };
    const errors = refused({ subject: '{{{C}}}', html: '' }, variables, values);
    expect(errors.map((e) => e.field)).toEqual([
      'template.variables.A',
      'template.variables.B',
      'template.variables.C',
      'template.variables.Z',
      'template.variables.Y',
    ]);
    expect(refused({ subject: '{{{C}}}', html: '' }, variables, values)).toEqual(errors);
  });
});

describe('the rendered size', () => {
  const parts = { html: `<p>${'{{{V}}}'.repeat(100)}</p>`, text: '{{{V}}}' };
  const vars = [{ key: 'V', type: 'string' as const }];
  it('stops at maxBytes, counting every part, and says so on template.variables', () => {
    const fits = renderTemplate(parts, vars, { V: 'x'.repeat(90) }, 10_000);
    expect(fits.ok).toBe(true);
    const over = renderTemplate(parts, vars, { V: 'x'.repeat(110) }, 10_000);
    expect(over).toEqual({
      ok: false,
      errors: [{ field: 'template.variables', message: expect.stringContaining('larger than 9 KB') }],
    });
    // HTML escaping counts: five characters become 25.
    expect(renderTemplate(parts, vars, { V: '<<<<<'.repeat(20) }, 10_000).ok).toBe(false);
  });
});

describe('properties', () => {
  const htmlish = fc.string({
    unit: fc.constantFrom('&', '<', '>', '"', "'", '`', ';', '#', '$', 'a', 'q', 'u', 'o', 't', '3', '9'),
    maxLength: 40,
  });
  const anyValue = fc.oneof(hostileString, htmlish);

  it('HTML: any string value lands escaped, so it cannot leave an attribute or add markup', () => {
    const html = '<a title="{{{V}}}" href="https://x.test/?q={{{V}}}">{{{V}}}</a>';
    fc.assert(
      fc.property(anyValue, (value) => {
        const escaped = escapeReference(value);
        expect(rendered({ html }, [variable('V')], { V: value }).html).toBe(
          html.split('{{{V}}}').join(escaped),
        );
        expect(escaped).not.toMatch(/[<>"'`]/);
        expect(escaped.replace(/&(?:amp|lt|gt|quot|#39|#96);/g, '')).not.toContain('&');
      }),
      { numRuns: 500 },
    );
  });

  it('text and subject: any value lands exactly as given', () => {
    fc.assert(
      fc.property(anyValue, anyValue, (inText, inSubject) => {
        const subjectValue = inSubject.replace(/[\r\n]/g, '');
        const result = rendered(
          { subject: 'Re: {{{S}}}!', html: '', text: '{{{T}}}\n--\n{{{ S }}}' },
          [variable('T'), variable('S')],
          { T: inText, S: subjectValue },
        );
        expect(result.subject).toBe(`Re: ${subjectValue}!`);
        expect(result.text).toBe(`${inText}\n--\n${subjectValue}`);
      }),
      { numRuns: 500 },
    );
  });

  it('checkTemplate takes up to 50 distinct valid keys used in the HTML, and refuses one undeclared', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(validKey, { minLength: 1, maxLength: MAX_TEMPLATE_VARIABLES }),
        fc.nat(),
        fc.constantFrom<VariableType>(...VARIABLE_TYPES),
        (keys, pick, type) => {
          const parts: TemplateParts = {
            html: keys.map((k, i) => `<p>{{{${i % 2 ? ` ${k} ` : k}}}}</p>`).join(''),
          };
          const variables = keys.map((k) => variable(k, type));
          expect(checkTemplate(parts, variables)).toEqual([]);
          const missing = keys[pick % keys.length] as string;
          const errors = checkTemplate(
            parts,
            variables.filter((v) => v.key !== missing),
          );
          expect(errors).toEqual([{ field: 'html', message: expect.stringContaining(`{{{${missing}}}}`) }]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
