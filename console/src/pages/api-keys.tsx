import { useEffect, useRef, useState } from 'preact/hooks';
import { PERMISSIONS } from '../../../functions/api-keys/permissions.js';
import type { ApiKey, ApiKeys, CreatedApiKey, Domain, Domains } from '../answers.js';
import { api } from '../api.js';
import { CopyButton, ErrorNote, PageHeading, restricted, useLoad, When } from '../components.js';
import { Confirm } from '../confirm.js';
import { List } from '../list.js';
import { href } from '../router.js';

/** A new key's token, and the name it was given (which its answer does not repeat). */
type Created = CreatedApiKey & { name: string };

type Permission = (typeof PERMISSIONS)[number];
/** What each permission lets a key call, beside its name in the choice. */
const PERMISSION_SCOPES: Record<Permission, string> = {
  full_access: 'every endpoint',
  sending_access: 'send only',
};

const WHAT = 'the API keys';

export function ApiKeysPage() {
  const keys = useLoad(() => api<ApiKeys>('/v1/api-keys?limit=100', { what: WHAT }), []);
  // For the names of the domains keys are restricted to, and the choice when creating one.
  const domains = useLoad(() => api<Domains>('/v1/domains?limit=100', { what: 'the domains' }), []);
  const [created, setCreated] = useState<Created>();
  const domainName = (id: string) => domains.data?.data.find((d) => d.id === id)?.name ?? id;
  return (
    <>
      <PageHeading>API keys</PageHeading>
      {!restricted(keys.error) && (
        <CreateKey
          domains={domains.data?.data ?? []}
          onCreated={(key) => {
            setCreated(key);
            keys.reload();
          }}
        />
      )}
      {created && <NewToken created={created} onDone={() => setCreated(undefined)} />}
      <List
        list={keys}
        empty={{
          title: 'No API key yet.',
          help: (
            <p>Create one above; give each application that only sends a sending-access key of its own.</p>
          ),
        }}
        columns={['Name', 'Permission', 'Domain', 'Created', 'Last used', { label: 'Actions', hidden: true }]}
        row={(key) => <KeyRow apiKey={key} domainName={domainName} onChanged={keys.reload} />}
        more="The newest 100 keys are shown."
      />
    </>
  );
}

function CreateKey({ domains, onCreated }: { domains: Domain[]; onCreated: (key: Created) => void }) {
  const [name, setName] = useState('');
  const [permission, setPermission] = useState<Permission>('full_access');
  const [domainId, setDomainId] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body: Record<string, string> = { name: name.trim(), permission };
      if (permission === 'sending_access' && domainId) body.domain_id = domainId;
      const key = await api<CreatedApiKey>('/v1/api-keys', {
        method: 'POST',
        body,
        what: WHAT,
      });
      onCreated({ ...key, name: body.name ?? '' });
      setName('');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <form class="actions" onSubmit={submit}>
        <div>
          <label for="key-name">Name</label>
          <br />
          <input
            id="key-name"
            required
            maxLength={50}
            autoComplete="off"
            placeholder="shop backend"
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div>
          <label for="key-permission">Permission</label>
          <br />
          <select
            id="key-permission"
            value={permission}
            onChange={(e) => setPermission((e.currentTarget as HTMLSelectElement).value as Permission)}
          >
            {PERMISSIONS.map((p) => (
              <option key={p} value={p}>{`${p} (${PERMISSION_SCOPES[p]})`}</option>
            ))}
          </select>
        </div>
        {permission === 'sending_access' && (
          <div>
            <label for="key-domain">Domain</label>
            <br />
            <select
              id="key-domain"
              value={domainId}
              onChange={(e) => setDomainId((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">Any domain</option>
              {domains.map((domain) => (
                <option key={domain.id} value={domain.id}>
                  {domain.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <button type="submit" disabled={busy}>
          Create API key
        </button>
      </form>
      <ErrorNote error={error} />
    </section>
  );
}

/** The token, this once: the service keeps only its hash. */
function NewToken({ created, onDone }: { created: Created; onDone: () => void }) {
  return (
    <section class="token" aria-labelledby="token-heading">
      <h2 id="token-heading">Key "{created.name}" created</h2>
      <p role="status">
        <strong>Copy the token now: it will not be shown again.</strong> Only its hash is kept.
      </p>
      <label for="new-token">Token</label>
      <div class="copyable">
        <input
          id="new-token"
          readOnly
          value={created.token}
          spellcheck={false}
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
        <CopyButton value={created.token} label="token" />
      </div>
      <div class="actions">
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

function KeyRow({
  apiKey,
  domainName,
  onChanged,
}: {
  apiKey: ApiKey;
  domainName: (id: string) => string;
  onChanged: () => void;
}) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(apiKey.name);
  const [revoking, setRevoking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const path = `/v1/api-keys/${encodeURIComponent(apiKey.id)}`;
  const act = async (request: () => Promise<unknown>, done: () => void) => {
    setBusy(true);
    setError(undefined);
    try {
      await request();
      done();
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const inputId = `rename-${apiKey.id}`;
  const renameInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (renaming) renameInput.current?.focus();
  }, [renaming]);
  return (
    <tr>
      <td>
        {renaming ? (
          <form
            class="actions"
            onSubmit={(event) => {
              event.preventDefault();
              act(
                () => api(path, { method: 'PATCH', body: { name: name.trim() }, what: WHAT }),
                () => setRenaming(false),
              );
            }}
          >
            <label for={inputId} class="visually-hidden">
              New name for {apiKey.name}
            </label>
            <input
              id={inputId}
              required
              maxLength={50}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
              ref={renameInput}
            />
            <button type="submit" class="small" disabled={busy}>
              Save
            </button>
            <button
              type="button"
              class="small secondary"
              onClick={() => {
                setRenaming(false);
                setName(apiKey.name);
                setError(undefined);
              }}
            >
              Cancel
            </button>
          </form>
        ) : (
          apiKey.name
        )}
        {!revoking && <ErrorNote error={error} />}
      </td>
      <td>{apiKey.permission}</td>
      <td>
        {apiKey.domain_id ? (
          <a href={href('domains', apiKey.domain_id)}>{domainName(apiKey.domain_id)}</a>
        ) : (
          <span class="muted">{apiKey.permission === 'sending_access' ? 'any' : '—'}</span>
        )}
      </td>
      <td>
        <When at={apiKey.created_at} />
      </td>
      <td>{apiKey.last_used_at ? <When at={apiKey.last_used_at} /> : <span class="muted">never</span>}</td>
      <td>
        <div class="actions">
          <button
            type="button"
            class="small secondary"
            aria-label={`Rename ${apiKey.name}`}
            disabled={renaming}
            onClick={() => setRenaming(true)}
          >
            Rename
          </button>
          <button
            type="button"
            class="small danger"
            aria-label={`Revoke ${apiKey.name}`}
            onClick={() => setRevoking(true)}
          >
            Revoke
          </button>
        </div>
        {revoking && (
          <Confirm
            title={`Revoke ${apiKey.name}?`}
            action="Revoke"
            busy={busy}
            onConfirm={() =>
              act(
                () => api(path, { method: 'DELETE', what: WHAT }),
                () => setRevoking(false),
              )
            }
            onCancel={() => {
              setRevoking(false);
              setError(undefined);
            }}
          >
            <p>
              Every request with this key is refused from now on (401). If you are signed in with it, you will
              be signed out.
            </p>
            <ErrorNote error={error} />
          </Confirm>
        )}
      </td>
    </tr>
  );
}
