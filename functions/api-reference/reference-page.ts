import type { BuiltPage } from '../shared/page.js';
import { cspHash } from '../shared/page.js';

type Json = Record<string, unknown>;

/** Text made safe for HTML (element content and quoted attribute values). */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A description's words: escaped, with `code` spans and paragraphs; nothing else of Markdown. */
const prose = (text: string | undefined) =>
  (text ?? '')
    .split(/\n{2,}/)
    .filter((p) => p.trim())
    .map((p) => `<p>${escapeHtml(p).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('');

const json = (value: unknown) => `<pre><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;

const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1d21;--bg:#fff;--muted:#5b6270;--line:#d9dce1;--code:#f3f4f6;--accent:#0b57d0}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--bg:#131417;--muted:#a3a9b4;--line:#2f3238;--code:#1d1f24;--accent:#8ab4f8}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}a:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.layout{display:grid;grid-template-columns:minmax(200px,260px) minmax(0,1fr);min-height:100vh}
nav{border-right:1px solid var(--line);padding:1rem;position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto}
nav ul{list-style:none;padding:0;margin:0 0 1rem}nav li{margin:.15rem 0;font-size:.9rem}nav h2{font-size:.8rem;text-transform:uppercase;color:var(--muted);margin:1rem 0 .3rem}
main{padding:1.5rem 2rem;max-width:960px;min-width:0}h1{margin-top:0}
section.op{border-top:1px solid var(--line);padding:1rem 0}
.method{display:inline-block;min-width:4.2rem;font:600 .8rem ui-monospace,monospace;padding:.1rem .4rem;border-radius:4px;border:1px solid var(--line);text-align:center}
.path{font:600 1rem ui-monospace,monospace;margin-left:.4rem;overflow-wrap:anywhere}
.perm{color:var(--muted);font-size:.85rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}
pre{background:var(--code);padding:.75rem;border-radius:6px;overflow-y:auto;max-height:28rem;white-space:pre-wrap}
code,pre,.wrap-anywhere{overflow-wrap:anywhere}
p code{background:var(--code);padding:0 .25rem;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{border-bottom:1px solid var(--line);text-align:left;padding:.3rem .5rem;vertical-align:top;font-size:.9rem}
details{margin:.4rem 0}summary{cursor:pointer}
@media (max-width:720px){.layout{display:block}nav{position:static;max-height:none;border-right:0;border-bottom:1px solid var(--line)}main{padding:1rem}}
`;

function parameters(op: Json): string {
  const list = (op.parameters ?? []) as Json[];
  if (!list.length) return '';
  const rows = list
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema ?? {}))}</code>${prose(p.description as string)}</td></tr>`,
    )
    .join('');
  return `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Schema</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function requestBody(op: Json): string {
  const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const media = content?.['application/json'];
  if (!media) return '';
  return `<h4>Request body (JSON)</h4>${media.example !== undefined ? `<details open><summary>Example</summary>${json(media.example)}</details>` : ''}<details><summary>Schema</summary>${json(media.schema)}</details>`;
}

function responses(op: Json, doc: Json): string {
  const all = (op.responses ?? {}) as Record<string, Json>;
  const shared = ((doc.components as Json).responses ?? {}) as Record<string, Json>;
  const rows = Object.entries(all)
    .map(([status, r]) => {
      const ref = typeof r.$ref === 'string' ? shared[r.$ref.split('/').pop() ?? ''] : undefined;
      const response = ref ?? r;
      const content = Object.entries((response.content ?? {}) as Record<string, Json>)[0];
      const body = content
        ? `${content[1].example !== undefined ? `<details><summary>Example</summary>${json(content[1].example)}</details>` : ''}<details><summary>Schema (${escapeHtml(content[0])})</summary>${json(content[1].schema)}</details>`
        : '';
      return `<tr><td><code>${escapeHtml(status)}</code></td><td>${prose(response.description as string)}${body}</td></tr>`;
    })
    .join('');
  return `<h4>Answers</h4><table><thead><tr><th>Status</th><th>Meaning</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * The API reference page: the OpenAPI document as HTML, made on the server, with no script at all
 * (so it works offline, needs no CDN and runs under a Content-Security-Policy that allows only its
 * own inline style). Every text from the document is escaped.
 */
export function renderReference(doc: Json): BuiltPage {
  const info = doc.info as Json;
  const byTag = new Map<string, { method: string; path: string; op: Json }[]>();
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>))
    for (const [method, op] of Object.entries(methods)) {
      const tag = ((op.tags as string[] | undefined) ?? ['Other'])[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method: method.toUpperCase(), path, op }]);
    }
  const nav = [...byTag]
    .map(
      ([tag, ops]) =>
        `<h2>${escapeHtml(tag)}</h2><ul>${ops
          .map(
            ({ method, path, op }) =>
              `<li><a class="wrap-anywhere" href="#${anchor(String(op.operationId))}">${escapeHtml(method)} ${escapeHtml(path)}</a></li>`,
          )
          .join('')}</ul>`,
    )
    .join('');
  const sections = [...byTag]
    .map(
      ([tag, ops]) =>
        `<h2 id="${anchor(`tag-${tag}`)}">${escapeHtml(tag)}</h2>${ops
          .map(
            ({ method, path, op }) =>
              `<section class="op" id="${anchor(String(op.operationId))}"><h3><span class="method">${escapeHtml(method)}</span><span class="path wrap-anywhere">${escapeHtml(path)}</span></h3><p><strong>${escapeHtml(String(op.summary ?? ''))}</strong> <span class="perm">(${escapeHtml(op['x-permission'] === 'public' ? 'public: no key' : op['x-permission'] === 'token' ? "no key: the link's token" : `needs ${String(op['x-permission'])}`)})</span></p>${prose(op.description as string)}${parameters(op)}${requestBody(op)}${responses(op, doc)}</section>`,
          )
          .join('')}`,
    )
    .join('');
  const errorSchema = ((doc.components as Json).schemas as Json).Error;
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(String(info.title))} reference</title><style>${STYLE}</style></head>
<body><div class="layout"><nav aria-label="Endpoints"><p><a href="#top">${escapeHtml(String(info.title))}</a></p>${nav}</nav>
<main id="top"><h1>${escapeHtml(String(info.title))} <small>${escapeHtml(String(info.version))}</small></h1>${prose(info.description as string)}
<p>The machine-readable document: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1). Authentication: <code>Authorization: Bearer esk_…</code>.</p>
<h2 id="errors">Errors</h2><p>Every error has this shape:</p>${json(errorSchema)}
${sections}</main></div></body></html>
`;
  return { contentType: 'text/html; charset=utf-8', body, styleHashes: [cspHash(STYLE)] };
}
