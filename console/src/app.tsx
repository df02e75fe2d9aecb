import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, api, whenUnauthorized } from './api.js';
import { ErrorNote } from './components.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { BroadcastsPage } from './pages/broadcasts.js';
import { ContactsPage } from './pages/contacts.js';
import { DomainsPage } from './pages/domains.js';
import { EmailPage } from './pages/email.js';
import { EmailsPage } from './pages/emails.js';
import { LogsPage } from './pages/logs.js';
import { OverviewPage } from './pages/overview.js';
import { ReceivingPage } from './pages/receiving.js';
import { SegmentsPage } from './pages/segments.js';
import { SuppressionsPage } from './pages/suppressions.js';
import { TemplatesPage } from './pages/templates.js';
import { TopicsPage } from './pages/topics.js';
import { WebhooksPage } from './pages/webhooks.js';
import { useRoute } from './router.js';
import { session } from './session.js';

/** The navigation: one link per page, in this order. */
const PAGES = [
  { path: '', label: 'Overview' },
  { path: 'emails', label: 'Emails' },
  { path: 'templates', label: 'Templates' },
  { path: 'contacts', label: 'Contacts' },
  { path: 'segments', label: 'Segments' },
  { path: 'topics', label: 'Topics' },
  { path: 'broadcasts', label: 'Broadcasts' },
  { path: 'receiving', label: 'Receiving' },
  { path: 'domains', label: 'Domains' },
  { path: 'api-keys', label: 'API keys' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'suppressions', label: 'Suppressions' },
  { path: 'logs', label: 'Logs' },
] as const;

export function App() {
  const [signedIn, setSignedIn] = useState(() => session.get() !== null);
  const [expired, setExpired] = useState(false);
  useEffect(() => {
    whenUnauthorized(() => {
      session.clear();
      setExpired(true);
      setSignedIn(false);
    });
  }, []);
  if (!signedIn)
    return (
      <SignIn
        expired={expired}
        onSignedIn={() => {
          setExpired(false);
          setSignedIn(true);
        }}
      />
    );
  return (
    <Shell
      onSignOut={() => {
        session.clear();
        setSignedIn(false);
      }}
    />
  );
}

function SignIn({ expired, onSignedIn }: { expired: boolean; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const apiKey = key.trim();
    if (!apiKey) {
      setError(
        new ApiFailure(
          0,
          'missing_api_key',
          'Enter an API key.',
          'Paste the key that `npm start` printed, or one you created.',
        ),
      );
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      // A cheap request that tells a valid key from another one.
      await api('/v1/domains?limit=1', { key: apiKey });
      session.set(apiKey);
      onSignedIn();
    } catch (failure) {
      // A sending-access key may not list domains, but it is a valid key: the pages say what it may not do.
      if (failure instanceof ApiFailure && failure.status === 403 && failure.name === 'restricted_api_key') {
        session.set(apiKey);
        onSignedIn();
      } else setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Email service console</h1>
      {expired && (
        <p class="notice" role="status">
          Your key was refused: sign in again.
        </p>
      )}
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder="esk_…"
          value={key}
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          aria-describedby="api-key-help"
        />
        <p id="api-key-help" class="muted">
          Kept in this tab only, and forgotten when you sign out or close it. Locally, <code>npm start</code>{' '}
          prints one.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ErrorNote error={error} />
    </main>
  );
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const [section = '', id] = route;
  return (
    <>
      <button type="button" class="skip-link" onClick={skipToMain}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">Email service</span>
        <nav aria-label="Console">
          <ul>
            {PAGES.map((page) => (
              <li key={page.path}>
                <a href={`#/${page.path}`} aria-current={section === page.path ? 'page' : undefined}>
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page key={route.join('/')} section={section} id={id} />
      </main>
    </>
  );
}

/** The skip link is a button: it moves focus without changing the hash (the hash is the page's route). */
function skipToMain() {
  document.getElementById('main')?.focus();
}

function Page({ section, id }: { section: string; id: string | undefined }) {
  switch (section) {
    case '':
      return <OverviewPage />;
    case 'emails':
      return id ? <EmailPage id={id} /> : <EmailsPage />;
    case 'templates':
      return <TemplatesPage id={id} />;
    case 'contacts':
      return <ContactsPage id={id} />;
    case 'segments':
      return <SegmentsPage id={id} />;
    case 'topics':
      return <TopicsPage id={id} />;
    case 'broadcasts':
      return <BroadcastsPage id={id} />;
    case 'receiving':
      return <ReceivingPage id={id} />;
    case 'domains':
      return <DomainsPage id={id} />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'webhooks':
      return <WebhooksPage id={id} />;
    case 'suppressions':
      return <SuppressionsPage />;
    case 'logs':
      return <LogsPage id={id} />;
    default:
      return (
        <>
          <h1>No such page</h1>
          <p>
            <a href="#/">Go to the overview</a>.
          </p>
        </>
      );
  }
}
