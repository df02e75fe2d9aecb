import { useState } from 'preact/hooks';
import { TLS_MODES } from '../../../functions/domains/tls-modes.js';
import type { Domain, DomainRecord, Domains } from '../answers.js';
import { api } from '../api.js';
import {
  CopyButton,
  ErrorNote,
  Loading,
  PageHeading,
  restricted,
  Status,
  useLoad,
  When,
} from '../components.js';
import { Confirm } from '../confirm.js';
import { List, Table } from '../list.js';
import { href } from '../router.js';

const WHAT = 'the domains';
const path = (id: string) => `/v1/domains/${encodeURIComponent(id)}`;

export function DomainsPage({ id }: { id?: string | undefined }) {
  return id ? <DomainPage id={id} /> : <DomainList />;
}

function DomainList() {
  const list = useLoad(() => api<Domains>('/v1/domains?limit=100', { what: WHAT }), []);
  return (
    <>
      <PageHeading>Domains</PageHeading>
      {!restricted(list.error) && <AddDomain />}
      <List
        list={list}
        empty={{
          title: 'No domain yet.',
          help: (
            <>
              <p>
                Email is sent only from a domain you added and verified. Add one above, or with the API, then
                publish the DNS records it shows:
              </p>
              <pre>{`curl -X POST "$API/domains" -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' -d '{"domain":"example.com"}'`}</pre>
              <p class="muted">
                Here <code>$API</code> is <code>{location.origin}/v1</code>.
              </p>
            </>
          ),
        }}
        columns={['Name', 'Status', 'Region', 'Created']}
        row={(domain) => (
          <tr>
            <td>
              <a href={href('domains', domain.id)}>{domain.name}</a>
            </td>
            <td>
              <Status value={domain.status} />
            </td>
            <td>{domain.region}</td>
            <td>
              <When at={domain.created_at} />
            </td>
          </tr>
        )}
        more="The newest 100 domains are shown."
      />
    </>
  );
}

function AddDomain() {
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api<Domain>('/v1/domains', {
        method: 'POST',
        body: { domain: name.trim() },
        what: WHAT,
      });
      location.hash = href('domains', created.id);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="actions" onSubmit={submit}>
      <div>
        <label for="new-domain">Domain</label>
        <br />
        <input
          id="new-domain"
          name="domain"
          required
          autoComplete="off"
          spellcheck={false}
          placeholder="acme.com"
          value={name}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" disabled={busy}>
        Add domain
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function DomainPage({ id }: { id: string }) {
  // GET reads SES on the spot; "Verify" asks it explicitly and answers the same object.
  const [fresh, setFresh] = useState<Domain>();
  const loaded = useLoad(() => api<Domain>(path(id), { what: WHAT }), [id]);
  const domain = fresh ?? loaded.data;
  const [verifying, setVerifying] = useState(false);
  const [verifyError, setVerifyError] = useState<unknown>();
  const verify = async () => {
    setVerifying(true);
    setVerifyError(undefined);
    try {
      setFresh(await api<Domain>(`${path(id)}/verify`, { method: 'POST', what: WHAT }));
    } catch (failure) {
      setVerifyError(failure);
    } finally {
      setVerifying(false);
    }
  };
  return (
    <>
      <p>
        <a href="#/domains">← Domains</a>
      </p>
      <PageHeading>{domain?.name ?? `Domain ${id}`}</PageHeading>
      <ErrorNote error={loaded.error} />
      {!domain && loaded.loading && <Loading />}
      {domain && (
        <>
          <dl class="fields">
            <dt>Status</dt>
            <dd id="domain-status" aria-live="polite">
              <Status value={domain.status} />
            </dd>
            <dt>Region</dt>
            <dd>{domain.region}</dd>
            <dt>Created</dt>
            <dd>
              <When at={domain.created_at} />
            </dd>
            {domain.mail_from_domain && (
              <>
                <dt>MAIL FROM</dt>
                <dd>{domain.mail_from_domain}</dd>
              </>
            )}
            <dt>Id</dt>
            <dd>
              <code>{domain.id}</code>
            </dd>
          </dl>
          <div class="actions">
            <button type="button" onClick={verify} disabled={verifying}>
              Verify
            </button>
            <span class="muted">{verifyHint(domain.status)}</span>
          </div>
          <ErrorNote error={verifyError} />
          <Records domain={domain} />
          <Settings
            key={domain.id}
            domain={domain}
            onSaved={() => {
              setFresh(undefined);
              loaded.reload();
            }}
          />
          <DeleteDomain domain={domain} />
        </>
      )}
    </>
  );
}

/**
 * What to do next, by status. SES gives up on records missing for 72 hours and restarts a failed
 * verification only from the beginning, with a new identity (docs/api.md, "Sending domains"):
 * Verify only reads that status again.
 */
function verifyHint(status: string): string {
  if (status === 'verified') return 'SES has verified this domain: it can send.';
  if (status === 'failed')
    return 'SES stopped looking for the records (missing for 72 hours, or removed since): Verify will not restart it. Delete the domain and add it again, then publish the new records it gives.';
  return 'Publish the records below at your DNS provider, then press Verify (SES also checks by itself).';
}

function Records({ domain }: { domain: Domain }) {
  const records = domain.records ?? [];
  // Each record is named by its kind and its number within it: "DKIM record 1", "SPF record 2".
  const seen = new Map<string, number>();
  const named = records.map((record) => {
    const n = (seen.get(record.record) ?? 0) + 1;
    seen.set(record.record, n);
    return { record, label: `${record.record} record ${n}` };
  });
  const dmarc = domain.dmarc_record;
  return (
    <section aria-labelledby="records-heading">
      <h2 id="records-heading">DNS records</h2>
      <p class="muted">
        Names are fully qualified: in a DNS provider that appends the domain, enter only the part before it.
      </p>
      <Table columns={['Record', 'Type', 'Name', 'Value', 'Priority', 'TTL', 'Status']}>
        {named.map(({ record, label }) => (
          <RecordRow key={label} record={record} label={label} kind={record.record} />
        ))}
        {dmarc && <RecordRow record={dmarc} label="DMARC record (suggested)" kind="DMARC" />}
      </Table>
      {dmarc && <p class="muted">The DMARC record is a suggestion (report only); SES does not check it.</p>}
    </section>
  );
}

/** A row: a record SES checks, or the suggested DMARC record (which has no priority). */
function RecordRow({
  record,
  label,
  kind,
}: {
  record: Omit<DomainRecord, 'record'> | Domain['dmarc_record'];
  label: string;
  kind: string;
}) {
  return (
    <tr>
      <th scope="row">{kind}</th>
      <td class="nowrap">{record.type}</td>
      <td>
        <div class="copyable">
          <code>{record.name}</code>
          <CopyButton value={record.name} label={`name of ${label}`} />
        </div>
      </td>
      <td>
        <div class="copyable">
          <code>{record.value}</code>
          <CopyButton value={record.value} label={`value of ${label}`} />
        </div>
      </td>
      <td class="nowrap">
        {('priority' in record ? record.priority : undefined) ?? <span class="muted">—</span>}
      </td>
      <td class="nowrap">{record.ttl ?? <span class="muted">—</span>}</td>
      <td class="nowrap">
        <Status value={record.status} />
      </td>
    </tr>
  );
}

function Settings({ domain, onSaved }: { domain: Domain; onSaved: () => void }) {
  const [open, setOpen] = useState(domain.open_tracking === true);
  const [click, setClick] = useState(domain.click_tracking === true);
  const [tls, setTls] = useState(domain.tls ?? 'opportunistic');
  const [subdomain, setSubdomain] = useState(domain.tracking_subdomain ?? '');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSaved(false);
    const body: Record<string, unknown> = { open_tracking: open, click_tracking: click, tls };
    // Sent only when changed: once set it can be changed, not removed.
    const sub = subdomain.trim();
    if (sub !== (domain.tracking_subdomain ?? '')) body.tracking_subdomain = sub;
    try {
      await api(path(domain.id), { method: 'PATCH', body, what: WHAT });
      setSaved(true);
      onSaved();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const touched = () => setSaved(false);
  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <form class="settings" onSubmit={submit}>
        <div class="check">
          <input
            id="open-tracking"
            type="checkbox"
            checked={open}
            onChange={(e) => {
              setOpen((e.currentTarget as HTMLInputElement).checked);
              touched();
            }}
          />
          <label for="open-tracking">Open tracking</label>
        </div>
        <div class="check">
          <input
            id="click-tracking"
            type="checkbox"
            checked={click}
            onChange={(e) => {
              setClick((e.currentTarget as HTMLInputElement).checked);
              touched();
            }}
          />
          <label for="click-tracking">Click tracking</label>
        </div>
        <p class="muted">
          Tracking adds a pixel and rewrites links through a tracking host: leave it off for sensitive mail.
        </p>
        <div>
          <label for="tls">TLS</label>
          <br />
          <select
            id="tls"
            value={tls}
            aria-describedby="tls-help"
            onChange={(e) => {
              setTls((e.currentTarget as HTMLSelectElement).value as Domain['tls']);
              touched();
            }}
          >
            {TLS_MODES.map((mode) => (
              <option key={mode} value={mode}>
                {mode}
              </option>
            ))}
          </select>
          <p id="tls-help" class="muted">
            Enforced: SES delivers only over TLS, or the email bounces.
          </p>
        </div>
        <div>
          <label for="tracking-subdomain">Tracking subdomain</label>
          <br />
          <input
            id="tracking-subdomain"
            autoComplete="off"
            spellcheck={false}
            placeholder="links"
            aria-describedby="tracking-subdomain-help"
            value={subdomain}
            onInput={(e) => {
              setSubdomain((e.currentTarget as HTMLInputElement).value);
              touched();
            }}
          />
          <p id="tracking-subdomain-help" class="muted">
            Your own host in tracked links (links.{domain.name}); it needs the stack's HTTPS front for
            tracking hosts. Once set it can be changed, not removed.
          </p>
        </div>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Save settings
          </button>
          {saved && (
            <span role="status" class="ok">
              Saved.
            </span>
          )}
        </div>
        <ErrorNote error={error} />
      </form>
    </section>
  );
}

function DeleteDomain({ domain }: { domain: Domain }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api(path(domain.id), { method: 'DELETE', what: WHAT });
      setAsking(false);
      location.hash = '#/domains';
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      <p class="muted">Removes the domain and its SES identity: no email can be sent from it afterwards.</p>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete domain
      </button>
      {asking && (
        <Confirm
          title={`Delete ${domain.name}?`}
          action="Delete"
          busy={busy}
          onConfirm={remove}
          onCancel={() => {
            setAsking(false);
            setError(undefined);
          }}
        >
          <p>Emails from it will no longer be sent, and its DNS records stop doing anything.</p>
          <ErrorNote error={error} />
        </Confirm>
      )}
    </section>
  );
}
