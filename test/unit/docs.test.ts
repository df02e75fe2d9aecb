import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The README stays a first read: what it is, the two commands, a short try, deploying, an index. */
const README_LINE_BUDGET = 200;

/**
 * Pages the docs index links to that other branches are adding (the metrics and request logs
 * endpoints). A link to one passes while the page is missing; once it exists it is checked like the
 * rest. Take a page off this list when it has landed.
 */
const PAGES_IN_PROGRESS = new Set<string>([]);

const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks, where a `](…)` is markdown and not an example. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const anchorsOf = (text: string) => {
  const seen = new Map<string, number>();
  return new Set(
    [...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => {
      const slug = (m[1] ?? '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-');
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      return count === 0 ? slug : `${slug}-${count}`;
    }),
  );
};

/** Every relative link of a page: [text](target) outside code, not a URL with a scheme. */
const relativeLinks = (text: string) =>
  [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));

describe('documentation', () => {
  it(`keeps the README under ${README_LINE_BUDGET} lines`, () => {
    const lines = readFileSync('README.md', 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_LINE_BUDGET);
  });

  it('links only to files that exist, and to headings those pages have', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of relativeLinks(readFileSync(page, 'utf8'))) {
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(file)) {
          if (!PAGES_IN_PROGRESS.has(file)) broken.push(`${page}: ${target} (no ${file})`);
          continue;
        }
        if (
          anchor !== undefined &&
          file.endsWith('.md') &&
          !anchorsOf(readFileSync(file, 'utf8')).has(anchor)
        )
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('cites, in code, tests and scripts, only sections the named page has', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const sources = ['functions', 'local', 'lib', 'bin', 'test'].flatMap((dir) => walk(dir));
    const slug = (section: string) => [...anchorsOf(`# ${section}`)][0] ?? '';
    // README, "Section" or docs/page.md, "Section" (or ’s "Section"), as the comments cite them.
    const citation = /(README|docs\/[\w-]+\.md)[^"\n]{0,4}"([^"$]+)"/g;
    const stale = sources
      .filter((file) => file !== join('test', 'unit', 'docs.test.ts'))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(citation)]
          .filter(([, page = '', section = '']) => {
            const path = page === 'README' ? 'README.md' : page;
            return !existsSync(path) || !anchorsOf(readFileSync(path, 'utf8')).has(slug(section));
          })
          .map(([, page, section]) => `${file}: ${page}, "${section}"`),
      );
    expect(stale).toEqual([]);
  });
});
