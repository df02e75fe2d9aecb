import type { Page } from 'playwright-core';

/**
 * What a page shows badly at its window's width, in words (none: it reads well), looked at in the
 * browser itself, after layout:
 * - the page is wider than the window, or a box in it scrolls sideways (`overflow-x`), or a box's
 *   content spills past its edge (a badge out of its cell, a word out of its card);
 * - a line breaks inside a word. Ordinary text may break only after a space or a hyphen, dash or
 *   slash; an address (`.address`) only after a space, a comma or its `@`, or before a dot; a badge
 *   (`.badge`) never. Text that may break at any character (ids, DNS values, URLs: `code`, `pre`,
 *   `.wrap-anywhere`) is not looked at;
 * - `cards`: a table that is still a grid of columns (below 600 px every list is stacked cards).
 *
 * Each problem names the element (tag and classes) and what was seen; a break is shown as the two
 * characters around it, `ab|cd`.
 */
const CHECK = `((wantCards) => {
    const problems = [];
    const name = (element) =>
      \`\${element.tagName.toLowerCase()}\${[...element.classList].map((c) => \`.\${c}\`).join('')}\`;
    const doc = document.documentElement;
    if (doc.scrollWidth > innerWidth)
      problems.push(\`the page is \${doc.scrollWidth} px wide in \${innerWidth}\`);
    // Hidden, or visually hidden (clipped to nothing, for screen readers only).
    const hidden = (element) => {
      if (element.closest('.visually-hidden, script, style, template, [hidden], noscript')) return true;
      for (let e = element; e; e = e.parentElement) if (getComputedStyle(e).clip !== 'auto') return true;
      return false;
    };
    for (const element of document.body.querySelectorAll('*')) {
      if (hidden(element) || element instanceof HTMLIFrameElement) continue;
      const style = getComputedStyle(element);
      if (style.display === 'none' || style.display === 'inline' || style.display === 'contents') continue;
      if (element.matches('input, select, textarea, option, progress, svg, svg *')) continue;
      if (style.overflowX === 'hidden' || style.overflowX === 'clip') continue;
      if (element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0)
        problems.push(
          \`\${name(element)} \${style.overflowX === 'visible' ? 'spills' : 'scrolls sideways'}: \${element.scrollWidth} px of content in \${element.clientWidth}\`,
        );
    }
    if (wantCards)
      for (const table of document.querySelectorAll('main table'))
        if (getComputedStyle(table).display === 'table')
          problems.push(\`\${name(table)} is still a table, not cards\`);
    // Breaks: the characters of each line box's container, in order; a new line is a higher top.
    const container = (node) => {
      let element = node.parentElement;
      while (element && getComputedStyle(element).display === 'inline') element = element.parentElement;
      return element;
    };
    const skipped = (element) =>
      element.closest('code, pre, .wrap-anywhere, textarea, svg') !== null;
    // A block, an inline-block or a <br> between two texts of one box starts a new line of its own.
    const separated = (from, to) => {
      const between = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT);
      between.currentNode = from;
      for (let e = between.nextNode(); e; e = between.nextNode()) {
        if (e.compareDocumentPosition(to) & Node.DOCUMENT_POSITION_PRECEDING) break;
        if (e.contains(to)) continue;
        if (e.tagName === 'BR' || getComputedStyle(e).display !== 'inline') return true;
      }
      return false;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    // One break reported an element: its first.
    const reported = new Set();
    const last = new Map();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || hidden(parent) || skipped(parent)) continue;
      const box = container(node);
      if (!box) continue;
      // Text right inside a flex or grid box is an item of its own, so each node is its own line box there.
      const flow = ['flex', 'inline-flex', 'grid', 'inline-grid'].includes(getComputedStyle(box).display)
        ? undefined
        : box;
      let previous = flow ? last.get(flow) : undefined;
      if (previous && separated(previous.node, node)) previous = undefined;
      const address = parent.closest('.address') !== null;
      const badge = parent.closest('.badge');
      for (let i = 0; i < node.data.length; i++) {
        const char = node.data[i] ?? '';
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (rect && rect.width > 0 && previous && rect.top > previous.top + 2) {
          const before = previous.char;
          const allowed = badge
            ? false
            : address
              ? /[\\s,@]/.test(before) || char === '.'
              : /[\\s\\-‐–—/]/.test(before);
          if (!allowed && !reported.has(badge ?? parent)) {
            reported.add(badge ?? parent);
            problems.push(
              \`\${name(badge ?? parent)} breaks inside a word: \${JSON.stringify(\`\${node.data.slice(Math.max(0, i - 12), i)}|\${node.data.slice(i, i + 12)}\`)}\`,
            );
          }
        }
        if (rect && rect.width > 0) previous = { top: rect.top, char, node };
        else if (previous) previous = { ...previous, char };
      }
      if (flow && previous) last.set(flow, previous);
    }
    return problems;
  })`;

export const layoutProblems = (page: Page, { cards }: { cards: boolean }) =>
  page.evaluate<string[]>(`${CHECK}(${JSON.stringify(cards)})`);
