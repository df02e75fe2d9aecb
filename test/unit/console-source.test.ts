import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The console renders hostile text (an email's subject, addresses, HTML): only through Preact, which
 * escapes it, and the preview's sandboxed frame. No source of the console may write markup itself.
 */
const ROOT = 'console/src';
const FORBIDDEN = /dangerouslySetInnerHTML|\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|document\.write/;

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : /\.(tsx?|jsx?)$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );

describe('the console source', () => {
  it('writes no markup of its own (no innerHTML, outerHTML, insertAdjacentHTML, document.write, dangerouslySetInnerHTML)', () => {
    const files = sources(ROOT);
    expect(files.length).toBeGreaterThan(5);
    const offenders = files.filter((file) => FORBIDDEN.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('catches each of them (the check itself)', () => {
    for (const line of [
      '<div dangerouslySetInnerHTML={{ __html: html }} />',
      'el.innerHTML = html',
      'el.outerHTML = html',
      "el.insertAdjacentHTML('beforeend', html)",
      'document.write(html)',
    ])
      expect(FORBIDDEN.test(line), line).toBe(true);
  });
});

/**
 * The server's vocabularies (statuses, event types, origins…) are the console's too: imported from
 * the server's modules, never copied, so a value added on the server shows in the console (or fails
 * its type check, where the console names each value).
 */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** The values of a list of single-quoted strings (spreads aside), or null when it holds anything else. */
function stringsOf(items: string): string[] | null {
  const values: string[] = [];
  for (const item of items.split(',').map((i) => i.trim())) {
    if (item === '' || item.startsWith('...')) continue;
    const literal = /^'([^'\\]*)'$/.exec(item);
    if (!literal) return null;
    values.push(literal[1] as string);
  }
  return values;
}

/** The server's lists of values: the arrays it declares `as const`, and the values of its `z.enum([…])`. */
function vocabulariesIn(source: string): string[][] {
  const text = withoutComments(source);
  return [...text.matchAll(/=\s*\[([^[\]]*)\]\s*as const/g), ...text.matchAll(/z\.enum\(\s*\[([^[\]]*)\]/g)]
    .map((m) => stringsOf(m[1] ?? ''))
    .filter((values): values is string[] => values !== null && values.length >= 2);
}

/**
 * The console's lists of values: arrays of strings (but those checked against the server's type with
 * `satisfies`, a choice among its values), and the fixed options of a select.
 */
function listsIn(source: string): string[][] {
  const text = withoutComments(source);
  const arrays = [...text.matchAll(/\[([^[\]]*)\](?!\s*(?:as const\s*)?satisfies\b)/g)].map((m) =>
    stringsOf(m[1] ?? ''),
  );
  const options = [...text.matchAll(/<select[\s\S]*?<\/select>/g)].map((m) =>
    [...(m[0] ?? '').matchAll(/<option value="([^"]+)"/g)].map((o) => o[1] as string),
  );
  return [...arrays, ...options].filter(
    (values): values is string[] => values !== null && values.length >= 2,
  );
}

/** The console's lists that are all values of one of the server's vocabularies. */
const copies = (lists: string[][], vocabularies: string[][]) =>
  lists.filter((list) =>
    vocabularies.some((vocabulary) => list.every((value) => vocabulary.includes(value))),
  );

const serverVocabularies = () =>
  sources('functions')
    .filter((file) => !file.endsWith('.generated.ts'))
    .flatMap((file) => vocabulariesIn(readFileSync(file, 'utf8')));

describe("the console and the server's vocabularies", () => {
  it('copies none of them: it imports them', () => {
    const vocabularies = serverVocabularies();
    const copied = sources(ROOT).flatMap((file) =>
      copies(listsIn(readFileSync(file, 'utf8')), vocabularies).map((list) => `${file}: ${list.join(', ')}`),
    );
    expect(copied).toEqual([]);
  });

  it('catches a copy, whole or in part, in an array or a select (the check itself)', () => {
    const vocabularies = serverVocabularies();
    for (const values of [
      ['queued', 'delivered', 'bounced', 'failed'],
      ['bounce', 'complaint', 'manual'],
      ['2xx', '3xx', '4xx', '5xx'],
      ['full_access', 'sending_access'],
      ['opportunistic', 'enforced'],
    ])
      expect(vocabularies, values.join()).toContainEqual(values);
    for (const copy of [
      "const STATUSES = ['queued', 'delivered', 'bounced', 'failed'] as const;",
      "const CLASSES = ['2xx', '4xx', '5xx'];",
      "const NEVER_SENT = [\n  'email.scheduled',\n  'suppression.added',\n];",
      '<select id="tls">\n<option value="opportunistic">opportunistic</option>\n<option value="enforced">enforced</option>\n</select>',
    ])
      expect(copies(listsIn(copy), vocabularies), copy).toHaveLength(1);
    for (const fine of [
      "const METRICS = ['sent', 'delivered'] as const satisfies readonly MetricName[];",
      "columns={['To', 'Subject']}",
      '-d \'{"events":["email.delivered","email.bounced"]}\'',
    ])
      expect(copies(listsIn(fine), vocabularies), fine).toEqual([]);
  });

  it('imports only server modules that import nothing themselves (the browser has no node:crypto, no zod)', () => {
    const offending = sources(ROOT).flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /^import\s+(?!type\b)[^;]*?from '((?:\.\.\/)+functions\/[^']+)'/gm,
        ),
      ]
        .map((m) => join(dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts')))
        .filter((module) =>
          /^\s*import\s+(?!type\b)|^\s*export\s+(?!type\b)[^;]*\bfrom\s+'/m.test(
            readFileSync(module, 'utf8'),
          ),
        )
        .map((module) => `${file} imports ${module}`),
    );
    expect(offending).toEqual([]);
  });
});

/**
 * One list component: every list's table, empty state and pager is list.tsx's, so a page that
 * writes its own table or pager is one that drifts from the others.
 */
const LIST_MARKUP = /<table\b|<thead\b|<tbody\b|class="table-wrap"|<Pager\b|\bpagerState\(/;
const LIST_MODULES = ['console/src/list.tsx', 'console/src/pager.tsx'];

describe("the console's lists", () => {
  it('are all drawn by list.tsx: no other source writes a table or a pager', () => {
    const offenders = sources(ROOT).filter(
      (file) => !LIST_MODULES.includes(file) && LIST_MARKUP.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
    expect(LIST_MARKUP.test(readFileSync('console/src/list.tsx', 'utf8'))).toBe(true);
  });

  it('catches a page drawing its own (the check itself)', () => {
    for (const line of [
      '<div class="table-wrap">',
      '<table>',
      '<thead>',
      '<Pager {...pagerState(list.data, cursor)} onPage={setCursor} />',
    ])
      expect(LIST_MARKUP.test(line), line).toBe(true);
    expect(LIST_MARKUP.test("<List list={list} columns={['To']} row={(email) => <tr />} />")).toBe(false);
  });

  it("take the API's answer types from one module, answers.ts (the server's schemas may move)", () => {
    const typeImports = sources(ROOT).filter(
      (file) =>
        file !== join(ROOT, 'answers.ts') &&
        /^import\s+type\b[^;]*?from '(?:\.\.\/)+functions\//m.test(readFileSync(file, 'utf8')),
    );
    expect(typeImports).toEqual([]);
  });
});
