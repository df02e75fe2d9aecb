import { useEffect, useState } from 'preact/hooks';
import type { Broadcasts } from '../answers.js';
import { api, query } from '../api.js';
import { refreshMsOf } from '../broadcast-form.js';
import { ErrorNote, Loading, PageHeading, restricted, Status, useLoad, When } from '../components.js';
import '../lists.css';
import '../broadcasts.css';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';
import { BroadcastPage } from './broadcast.js';
import { Compose, useSegmentNames } from './broadcast-compose.js';

const PAGE_SIZE = 20;
/** The list is asked again this often while one of its broadcasts is scheduled, queued or sending. */
const ACTIVE_REFRESH_MS = 5000;

/** `#/broadcasts` lists them; `#/broadcasts/new` composes one; `#/broadcasts/<id>` is one. */
export function BroadcastsPage({ id }: { id: string | undefined }) {
  if (id === 'new') return <NewBroadcast />;
  return id ? <BroadcastPage id={id} /> : <BroadcastList />;
}

function BroadcastList() {
  const [active, setActive] = useState(false);
  const list = usePagedList(
    (_, cursor) =>
      api<Broadcasts>(`/v1/broadcasts${query({ limit: PAGE_SIZE, ...cursor })}`, { what: 'the broadcasts' }),
    [],
    active ? ACTIVE_REFRESH_MS : undefined,
  );
  useEffect(() => {
    setActive((list.data?.data ?? []).some((b) => refreshMsOf(b.status) !== undefined));
  }, [list.data]);
  const { names } = useSegmentNames();
  return (
    <>
      <PageHeading>Broadcasts</PageHeading>
      <p class="muted">
        One email to a whole segment, each contact getting its own (its merge tags filled, its own unsubscribe
        link), sent behind transactional mail.
      </p>
      <List
        list={list}
        tools={
          <a class="button" href={href('broadcasts', 'new')}>
            New broadcast
          </a>
        }
        empty={{
          title: 'No broadcast yet.',
          help: (
            <p>
              Compose one with <strong>New broadcast</strong>, or with the API:
              <pre>{`curl ${location.origin}/v1/broadcasts -H "Authorization: Bearer $API_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"segment_id":"…","from":"News <news@example.com>","subject":"Hello",
       "html":"<p>Hi {{{contact.first_name|there}}}</p>"}'`}</pre>
            </p>
          ),
        }}
        columns={['Name', 'Status', 'Segment', 'Created', 'Scheduled for', 'Sent']}
        row={(broadcast) => {
          const segment = broadcast.segment_id ?? broadcast.audience_id ?? '';
          return (
            <tr>
              <td>
                <a href={href('broadcasts', broadcast.id)}>{broadcast.name || '(no name)'}</a>
              </td>
              <td>
                <Status value={broadcast.status} />
              </td>
              <td>
                {segment ? (
                  <a href={href('segments', segment)}>
                    {names[segment] ?? <code class="id">{segment}</code>}
                  </a>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td>
                <When at={broadcast.created_at} />
              </td>
              <td>
                <When at={broadcast.scheduled_at} />
              </td>
              <td>
                <When at={broadcast.sent_at} />
              </td>
            </tr>
          );
        }}
      />
    </>
  );
}

function NewBroadcast() {
  // Composing is for a full-access key: the broadcasts' refusal says so, and no form is shown.
  const probe = useLoad(
    () => api<Broadcasts>(`/v1/broadcasts${query({ limit: 1 })}`, { what: 'the broadcasts' }),
    [],
  );
  return (
    <>
      <p>
        <a href="#/broadcasts">← Broadcasts</a>
      </p>
      <PageHeading>New broadcast</PageHeading>
      {probe.loading ? (
        <Loading />
      ) : restricted(probe.error) ? (
        <ErrorNote error={probe.error} />
      ) : (
        <Compose />
      )}
    </>
  );
}
