import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
