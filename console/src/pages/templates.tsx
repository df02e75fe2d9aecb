import type { Templates } from '../answers.js';
import { api, query } from '../api.js';
import { PageHeading, Status, When } from '../components.js';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';
import '../templates.css';
import { TemplateEditor } from './template-editor.js';

const PAGE_SIZE = 20;

/** `#/templates` lists them; `#/templates/new` and `#/templates/tpl_…` edit one. */
export function TemplatesPage({ id }: { id: string | undefined }) {
  if (id) return <TemplateEditor id={id === 'new' ? undefined : id} />;
  return <TemplateList />;
}

function TemplateList() {
  // Templates change only when someone edits them: one request a page, no refresh.
  const list = usePagedList(
    (_filter, cursor) =>
      api<Templates>(`/v1/templates${query({ limit: PAGE_SIZE, ...cursor })}`, { what: 'templates' }),
    [],
  );
  return (
    <>
      <PageHeading>Templates</PageHeading>
      <List
        list={list}
        tools={
          <a class="button" href={href('templates', 'new')}>
            New template
          </a>
        }
        empty={{
          title: 'No template yet.',
          help: (
            <p>
              Press <strong>New template</strong>, or create one with <code>POST /v1/templates</code> (see{' '}
              <a href="/docs">the API reference</a>). A send names a published template by its id or alias:{' '}
              <code>{'"template": {"id": "welcome", "variables": {"NAME": "Ada"}}'}</code>.
            </p>
          ),
        }}
        columns={['Name', 'Alias', 'Status', 'Updated']}
        row={(template) => (
          <tr>
            <td>
              <a href={href('templates', template.id)}>{template.name}</a>
            </td>
            <td>
              {template.alias ? <code class="id">{template.alias}</code> : <span class="muted">—</span>}
            </td>
            <td>
              <Status value={template.status} />
            </td>
            <td>
              <When at={template.updated_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
