import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { BROADCAST_RECIPIENT_TYPES } from '../../../functions/emails/broadcast-tally.js';
import type {
  BounceType,
  Broadcast,
  BroadcastClickedLinks,
  BroadcastRecipients,
  BroadcastRecipientType,
} from '../answers.js';
import { api, query } from '../api.js';
import { recipientColumns, refreshMsOf, totalsCards } from '../broadcast-form.js';
import { Address, Status, When } from '../components.js';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';

const PAGE_SIZE = 20;
/** The recipients and links are asked again this often while the broadcast sends; not after. */
const SENDING_REFRESH_MS = 10_000;

const BOUNCE_TYPES = ['permanent', 'transient', 'undetermined'] as const satisfies readonly BounceType[];

const path = (id: string, ...rest: string[]) =>
  `/v1/broadcasts/${[id, ...rest].map(encodeURIComponent).join('/')}`;

/**
 * A broadcast's performance: its totals (which come with the broadcast: no request of their own),
 * its recipients by type (`GET /v1/broadcasts/{id}/recipients?type=`, with the email and bounce-type
 * filters, by pages) and its clicked links (`GET /v1/broadcasts/{id}/clicked-links`).
 */
export function Performance({ broadcast }: { broadcast: Broadcast }) {
  const refreshMs = refreshMsOf(broadcast.status) ? SENDING_REFRESH_MS : undefined;
  return (
    <section aria-labelledby="performance-heading">
      <h2 id="performance-heading">Performance</h2>
      {broadcast.totals ? (
        <ul class="cards" aria-label="Totals">
          {totalsCards(broadcast.totals).map((card) => (
            <li class="card" key={card.label}>
              <div class="muted">{card.label}</div>
              <div class="value">{card.value.toLocaleString()}</div>
              {card.note && <p class="note">{card.note}</p>}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No totals yet.</p>
      )}
      <Recipients id={broadcast.id} refreshMs={refreshMs} status={broadcast.status} />
      <ClickedLinks key={broadcast.status} id={broadcast.id} refreshMs={refreshMs} />
    </section>
  );
}

function Recipients({
  id,
  refreshMs,
  status,
}: {
  id: string;
  refreshMs: number | undefined;
  /** The broadcast's status: a change (sending → sent) reads the list once more, as it stops refreshing. */
  status: Broadcast['status'];
}) {
  const [type, setType] = useState<BroadcastRecipientType>('sent');
  const [bounce, setBounce] = useState('');
  const [typed, setTyped] = useState('');
  const [email, setEmail] = useState('');
  const bounceType = type === 'bounced' ? bounce : '';
  const tools = (
    <search aria-label="Recipients" class="recipient-filters">
      <div>
        <label for="recipient-type">Type</label>
        <select
          id="recipient-type"
          value={type}
          onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as BroadcastRecipientType)}
        >
          {BROADCAST_RECIPIENT_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      {type === 'bounced' && (
        <div>
          <label for="recipient-bounce">Bounce type</label>
          <select
            id="recipient-bounce"
            value={bounce}
            onChange={(e) => setBounce((e.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">Any</option>
            {BOUNCE_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
      )}
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          setEmail(typed.trim());
        }}
      >
        <div>
          <label for="recipient-email">Email</label>
          <input
            id="recipient-email"
            type="search"
            autocomplete="off"
            placeholder="someone@example.com"
            value={typed}
            onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div>
          <button type="submit" class="secondary">
            Filter
          </button>
        </div>
      </form>
    </search>
  );
  return (
    <section aria-labelledby="recipients-heading">
      <h3 id="recipients-heading">Recipients</h3>
      {/* A new type or filter starts a new list at its first page; so does a new status (the last
          emails of a send counted after the list's last refresh). */}
      <RecipientRows
        key={`${type}|${bounceType}|${email}|${status}`}
        id={id}
        type={type}
        bounceType={bounceType}
        email={email}
        refreshMs={refreshMs}
        tools={tools}
      />
    </section>
  );
}

function RecipientRows({
  id,
  type,
  bounceType,
  email,
  refreshMs,
  tools,
}: {
  id: string;
  type: BroadcastRecipientType;
  bounceType: string;
  email: string;
  refreshMs: number | undefined;
  tools: ComponentChildren;
}) {
  const list = usePagedList(
    (_, cursor) =>
      api<BroadcastRecipients>(
        `${path(id, 'recipients')}${query({ type, email, bounce_type: bounceType, limit: PAGE_SIZE, ...cursor })}`,
        { what: "the broadcast's recipients" },
      ),
    [],
    refreshMs,
  );
  return (
    <List
      list={list}
      tools={tools}
      empty={{ title: email ? `No ${type} recipient with this address.` : `No ${type} recipient yet.` }}
      columns={recipientColumns(type)}
      row={(recipient) => (
        <tr>
          <td>
            {recipient.email_id || recipient.contact_id ? (
              <a
                href={
                  recipient.email_id
                    ? href('emails', recipient.email_id)
                    : href('contacts', recipient.contact_id as string)
                }
              >
                <Address value={recipient.email} />
              </a>
            ) : (
              <Address value={recipient.email} />
            )}
          </td>
          {(type === 'opened' || type === 'clicked') && <td class="num">{recipient.count ?? 1}</td>}
          {type === 'clicked' && (
            <td>
              {recipient.clicked_links?.length ? (
                <ul class="links">
                  {recipient.clicked_links.map((link) => (
                    <li key={link.url}>
                      <span class="wrap-anywhere">{link.url}</span>{' '}
                      <span class="muted">({link.clicks.toLocaleString()})</span>
                    </li>
                  ))}
                </ul>
              ) : (
                <span class="muted">—</span>
              )}
            </td>
          )}
          {type === 'bounced' && (
            <td>
              <Status value={recipient.bounce_type} />
            </td>
          )}
          <td>
            <When at={recipient.created_at} />
          </td>
        </tr>
      )}
    />
  );
}

function ClickedLinks({ id, refreshMs }: { id: string; refreshMs: number | undefined }) {
  const list = usePagedList(
    (_, cursor) =>
      api<BroadcastClickedLinks>(`${path(id, 'clicked-links')}${query({ limit: PAGE_SIZE, ...cursor })}`, {
        what: "the broadcast's clicked links",
      }),
    [id],
    refreshMs,
  );
  return (
    <section aria-labelledby="links-heading">
      <h3 id="links-heading">Clicked links</h3>
      <List
        list={list}
        empty={{
          title: 'No link clicked yet.',
          help: <p class="muted">Clicks are counted for domains with click tracking on.</p>,
        }}
        columns={['Link', { label: 'Clicks', class: 'num' }, { label: 'Unique clicks', class: 'num' }]}
        row={(link) => (
          <tr>
            <td class="wrap-anywhere">{link.url}</td>
            <td class="num">{link.clicks.toLocaleString()}</td>
            <td class="num">{link.unique_clicks.toLocaleString()}</td>
          </tr>
        )}
      />
    </section>
  );
}
