import { useEffect, useMemo, useState } from 'preact/hooks';
import { VARIABLE_TYPES, type VariableType } from '../../../functions/templates/render.js';
import type { Template, TemplateReference } from '../answers.js';
import { api } from '../api.js';
import { ErrorNote, Loading, PageHeading, Status, useLoad, When } from '../components.js';
import { ConfirmAction } from '../confirm-action.js';
import { Preview } from '../preview.js';
import { href } from '../router.js';
import {
  bodyOf,
  emptyForm,
  formOf,
  previewOf,
  problemsOf,
  type TemplateForm,
  undeclaredOf,
  type VariableRow,
} from '../template-form.js';

/** The preview follows the typing this long after the last key, so the frame is not redrawn on every one. */
const PREVIEW_DELAY_MS = 250;

/**
 * Sample values by template and key, for this tab: kept when the page changes to the template just
 * created or saved (the API keeps no samples).
 */
const samplesOf = new Map<string, Map<string, string>>();
const keepSamples = (id: string, form: TemplateForm) =>
  samplesOf.set(id, new Map(form.variables.filter((v) => v.sample).map((v) => [v.key, v.sample])));

/** A template's page: `id` undefined for a new one (`#/templates/new`). */
export function TemplateEditor({ id }: { id: string | undefined }) {
  const template = useLoad(
    () =>
      id
        ? api<Template>(`/v1/templates/${encodeURIComponent(id)}`, { what: 'templates' })
        : Promise.resolve(undefined),
    [id],
  );
  const t = template.data;
  return (
    <>
      <p>
        <a href="#/templates">← Templates</a>
      </p>
      <PageHeading>{id ? (t ? t.name : `Template ${id}`) : 'New template'}</PageHeading>
      <ErrorNote error={template.error} />
      {id && !t && template.loading && <Loading />}
      {(!id || t) && (
        <Editor
          key={t ? `${t.id}-${t.current_version_id}-${t.status}-${t.updated_at}` : 'new'}
          template={t}
          onSaved={template.reload}
        />
      )}
    </>
  );
}

function Editor({ template, onSaved }: { template: Template | undefined; onSaved: () => void }) {
  const saved = useMemo(
    () => (template ? formOf(template, samplesOf.get(template.id)) : emptyForm()),
    [template],
  );
  const [form, setForm] = useState<TemplateForm>(saved);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const dirty = JSON.stringify(bodyOf(form)) !== JSON.stringify(bodyOf(saved));
  const problems = problemsOf(form);
  const undeclared = undeclaredOf(form);
  const set = (change: Partial<TemplateForm>) => setForm((f) => ({ ...f, ...change }));
  const setRow = (index: number, change: Partial<VariableRow>) =>
    setForm((f) => ({ ...f, variables: f.variables.map((v, i) => (i === index ? { ...v, ...change } : v)) }));

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await what();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const save = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      if (!template) {
        const created = await api<TemplateReference>('/v1/templates', {
          method: 'POST',
          body: bodyOf(form),
          what: 'templates',
        });
        keepSamples(created.id, form);
        location.hash = href('templates', created.id);
        return;
      }
      await api(`/v1/templates/${encodeURIComponent(template.id)}`, {
        method: 'PATCH',
        body: bodyOf(form),
        what: 'templates',
      });
      keepSamples(template.id, form);
      onSaved();
    });
  };
  const publish = () =>
    act(async () => {
      if (!template) return;
      await api(`/v1/templates/${encodeURIComponent(template.id)}/publish`, {
        method: 'POST',
        what: 'templates',
      });
      keepSamples(template.id, form);
      onSaved();
    });
  const duplicate = () =>
    act(async () => {
      if (!template) return;
      const copy = await api<TemplateReference>(
        `/v1/templates/${encodeURIComponent(template.id)}/duplicate`,
        { method: 'POST', what: 'templates' },
      );
      keepSamples(copy.id, form);
      location.hash = href('templates', copy.id);
    });
  const remove = () =>
    act(async () => {
      if (!template) return;
      await api(`/v1/templates/${encodeURIComponent(template.id)}`, { method: 'DELETE', what: 'templates' });
      location.hash = '#/templates';
    });

  const publishable =
    template && !dirty && (template.status === 'draft' || template.has_unpublished_versions);
  return (
    <>
      {template && (
        <dl class="fields">
          <dt>Status</dt>
          <dd>
            <Status value={template.status} />{' '}
            {template.has_unpublished_versions && template.status === 'published' && (
              <span class="muted">with changes not published yet: sends use the published version</span>
            )}
          </dd>
          <dt>Published</dt>
          <dd>
            <When at={template.published_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <When at={template.updated_at} />
          </dd>
          <dt>Id</dt>
          <dd>
            <code class="id">{template.id}</code>
          </dd>
        </dl>
      )}
      <div class="template-editor">
        <form class="template-form" onSubmit={save}>
          <Field id="template-name" label="Name" value={form.name} onInput={(name) => set({ name })} />
          <Field
            id="template-alias"
            label="Alias"
            hint="Optional: a name sends may use instead of the id, like welcome-email."
            value={form.alias}
            onInput={(alias) => set({ alias })}
          />
          <Field
            id="template-from"
            label="From"
            hint="Optional: a send may give its own."
            value={form.from}
            onInput={(from) => set({ from })}
          />
          <Field
            id="template-subject"
            label="Subject"
            value={form.subject}
            onInput={(subject) => set({ subject })}
          />
          <Field
            id="template-reply-to"
            label="Reply to"
            hint="Optional: addresses separated by commas."
            value={form.replyTo}
            onInput={(replyTo) => set({ replyTo })}
          />
          <Field
            id="template-html"
            label="HTML"
            hint="Variables are written {{{NAME}}}; their values are HTML-escaped."
            value={form.html}
            multiline
            onInput={(html) => set({ html })}
          />
          <Field
            id="template-text"
            label="Text"
            hint="Optional: the plain-text part."
            value={form.text}
            multiline
            onInput={(text) => set({ text })}
          />
          <h2>Variables</h2>
          <p class="muted">
            Each variable the parts use is declared with a type and, if you like, a fallback value used when a
            send gives none. Sample values are for the preview only and are not saved. Strings are typed as
            they are; other types as JSON (<code>42</code>, <code>true</code>,{' '}
            <code>{'{"plan": "pro"}'}</code>, <code>["a"]</code>).
          </p>
          {form.variables.map((row, i) => (
            <VariableFields
              key={i}
              index={i}
              row={row}
              onChange={(change) => setRow(i, change)}
              onRemove={() => set({ variables: form.variables.filter((_, j) => j !== i) })}
            />
          ))}
          <div class="actions">
            <button
              type="button"
              class="secondary"
              onClick={() =>
                set({ variables: [...form.variables, { key: '', type: 'string', fallback: '', sample: '' }] })
              }
            >
              Add variable
            </button>
            {undeclared.length > 0 && (
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  set({
                    variables: [
                      ...form.variables,
                      ...undeclared.map((key) => ({
                        key,
                        type: 'string' as const,
                        fallback: '',
                        sample: '',
                      })),
                    ],
                  })
                }
              >
                Declare {undeclared.join(', ')}
              </button>
            )}
          </div>
          {problems.length > 0 && (
            <div class="notice" role="status">
              <p>
                <strong>Before saving:</strong>
              </p>
              <ul>
                {problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
          )}
          <ErrorNote error={error} />
          <div class="actions">
            <button type="submit" disabled={busy || problems.length > 0 || (!!template && !dirty)}>
              {template ? 'Save' : 'Create template'}
            </button>
            {template && (
              <>
                <button type="button" disabled={busy || !publishable} onClick={publish}>
                  Publish
                </button>
                <button type="button" class="secondary" disabled={busy} onClick={duplicate}>
                  Duplicate
                </button>
                <ConfirmAction
                  label="Delete template"
                  confirmLabel="Delete"
                  question={`Delete ${template.name}? Sends that name it are refused from now on.`}
                  busy={busy}
                  onConfirm={remove}
                />
              </>
            )}
            <span class="muted" role="status">
              {template && dirty
                ? 'Changes not saved.'
                : template && !publishable
                  ? 'Saved and published.'
                  : template
                    ? 'Saved: publish it for sends to use it.'
                    : ''}
            </span>
          </div>
        </form>
        <TemplatePreview form={form} />
      </div>
    </>
  );
}

function Field({
  id,
  label,
  hint,
  value,
  multiline,
  onInput,
}: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  multiline?: boolean;
  onInput: (value: string) => void;
}) {
  const input = (e: Event) => onInput((e.currentTarget as HTMLInputElement | HTMLTextAreaElement).value);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {multiline ? (
        <textarea
          id={id}
          rows={8}
          spellcheck={false}
          value={value}
          onInput={input}
          aria-describedby={hint && `${id}-hint`}
        />
      ) : (
        <input id={id} type="text" value={value} onInput={input} aria-describedby={hint && `${id}-hint`} />
      )}
      {hint && (
        <p id={`${id}-hint`} class="muted hint">
          {hint}
        </p>
      )}
    </div>
  );
}

function VariableFields({
  index,
  row,
  onChange,
  onRemove,
}: {
  index: number;
  row: VariableRow;
  onChange: (change: Partial<VariableRow>) => void;
  onRemove: () => void;
}) {
  const id = (part: string) => `variable-${index}-${part}`;
  const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  return (
    <fieldset class="variable">
      <legend>{row.key ? `Variable ${row.key}` : `Variable ${index + 1}`}</legend>
      <div class="field">
        <label for={id('key')}>Key</label>
        <input
          id={id('key')}
          type="text"
          spellcheck={false}
          value={row.key}
          onInput={(e) => onChange({ key: text(e) })}
        />
      </div>
      <div class="field">
        <label for={id('type')}>Type</label>
        <select
          id={id('type')}
          value={row.type}
          onChange={(e) => onChange({ type: (e.currentTarget as HTMLSelectElement).value as VariableType })}
        >
          {VARIABLE_TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={id('fallback')}>Fallback value</label>
        <input
          id={id('fallback')}
          type="text"
          value={row.fallback}
          onInput={(e) => onChange({ fallback: text(e) })}
        />
      </div>
      <div class="field">
        <label for={id('sample')}>Sample value</label>
        <input
          id={id('sample')}
          type="text"
          value={row.sample}
          onInput={(e) => onChange({ sample: text(e) })}
        />
      </div>
      <button type="button" class="secondary small" onClick={onRemove}>
        Remove {row.key || `variable ${index + 1}`}
      </button>
    </fieldset>
  );
}

/** The template filled with the sample values, in the console's sandboxed preview, a moment after typing stops. */
function TemplatePreview({ form }: { form: TemplateForm }) {
  const [shown, setShown] = useState(form);
  useEffect(() => {
    const timer = setTimeout(() => setShown(form), PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [form]);
  const rendered = useMemo(() => previewOf(shown), [shown]);
  return (
    <section class="template-preview" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Preview</h2>
      {rendered.ok ? (
        <>
          <p>
            <strong>Subject:</strong> <span data-testid="preview-subject">{rendered.subject ?? ''}</span>
          </p>
          <Preview html={rendered.html} />
          {rendered.text !== undefined && (
            <>
              <h3>Text</h3>
              <pre data-testid="preview-text">{rendered.text}</pre>
            </>
          )}
        </>
      ) : (
        <div class="notice" role="status">
          <p>
            <strong>The preview needs:</strong>
          </p>
          <ul>
            {rendered.errors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
