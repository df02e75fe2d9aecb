import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fenced code blocks of the docs, as docs/development.md's convention reads them: a shell
 * block's info string says where it runs. `sh local` runs against the local service after the
 * README's start (test/e2e/docs-examples.test.ts runs it); `sh aws` needs an AWS account, `sh dev`
 * is a command for the checkout itself (start the service, run the tests, the benchmarks): both
 * are checked for syntax only.
 */
export interface DocBlock {
  page: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  /** The info string after the backticks, trimmed (`sh local`, `json`, ``). */
  info: string;
  body: string;
}

export const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'zsh', 'console', 'shell-session']);
export const SHELL_MARKS = ['local', 'aws', 'dev'] as const;
export type ShellMark = (typeof SHELL_MARKS)[number];

/** The pages: the README first (the others assume its start), then docs/*.md by name. */
export const docPages = (root = '.'): string[] => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function blocksOf(page: string, text: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = text.split('\n');
  let open: { indent: string; fence: string; info: string; line: number; body: string[] } | undefined;
  lines.forEach((raw, i) => {
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(raw);
    if (open === undefined) {
      if (fence)
        open = {
          indent: fence[1] ?? '',
          fence: fence[2] ?? '',
          info: (fence[3] ?? '').trim(),
          line: i + 1,
          body: [],
        };
      return;
    }
    if (fence && (fence[2] ?? '').startsWith(open.fence) && (fence[3] ?? '').trim() === '') {
      blocks.push({ page, line: open.line, info: open.info, body: open.body.join('\n') });
      open = undefined;
      return;
    }
    open.body.push(raw.startsWith(open.indent) ? raw.slice(open.indent.length) : raw);
  });
  return blocks;
}

/** `local`, `aws` or `dev` for a marked shell block; undefined for any other block. */
export function markOf(block: DocBlock): ShellMark | undefined {
  const [language, mark] = block.info.split(/\s+/);
  if (!SHELL_LANGUAGES.has(language ?? '')) return undefined;
  return SHELL_MARKS.find((m) => m === mark);
}

/**
 * A shell block that says not where it runs: a shell language without a mark, or a block with no
 * language whose first command is one a reader would paste into a terminal.
 */
export function isUnmarkedShell(block: DocBlock): boolean {
  const language = block.info.split(/\s+/)[0] ?? '';
  if (SHELL_LANGUAGES.has(language)) return markOf(block) === undefined;
  if (language !== '') return false;
  const first = block.body.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#')) ?? '';
  return /^\s*(\$ )?(curl|npm|npx|node|aws|export|cd|jq|git|sudo|apt-get)\b/.test(first);
}

export const readBlocks = (root = '.'): DocBlock[] =>
  docPages(root).flatMap((page) => blocksOf(page, readFileSync(join(root, page), 'utf8')));
