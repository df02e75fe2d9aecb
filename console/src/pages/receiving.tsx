import type { ReceivedEmails } from '../answers.js';
import { api, query } from '../api.js';
import { Address, Addresses, PageHeading, When } from '../components.js';
import { List, usePagedList } from '../list.js';
import { href } from '../router.js';
import '../receiving.css';
import { Verdicts } from '../verdicts.js';
import { ReceivedEmailPage } from './received-email.js';

const PAGE_SIZE = 20;

export function ReceivingPage({ id }: { id?: string | undefined }) {
  return id ? <ReceivedEmailPage id={id} /> : <ReceivedList />;
}

/**
 * The received emails, newest first, by pages: one request a page (received mail does not change, so
 * the list is asked again only when you press Refresh).
 */
function ReceivedList() {
  const list = usePagedList(
    (_filter, cursor) =>
      api<ReceivedEmails>(`/v1/emails/receiving${query({ limit: PAGE_SIZE, ...cursor })}`, {
        what: 'received emails',
      }),
    [],
  );
  return (
    <>
      <PageHeading>Receiving</PageHeading>
      <p class="muted">
        Mail received at your domains with receiving enabled, newest first. Everything in it was written by
        its sender: the verdicts are SES's.
      </p>
      <List
        list={list}
        tools={
          <button type="button" class="secondary" onClick={list.reload}>
            Refresh
          </button>
        }
        empty={{
          title: 'No email received yet.',
          help: (
            <p>
              Enable receiving on a domain (<a href="#/domains">Domains</a>, or{' '}
              <code>{'PATCH /v1/domains/{id}'}</code> with{' '}
              <code>{'{"capabilities":{"receiving":"enabled"}}'}</code>
              ), publish its MX record, and mail sent to any address there shows here.
            </p>
          ),
        }}
        columns={['From', 'To', 'Subject', 'Received', { label: 'Attachments', class: 'num' }, 'Verdicts']}
        row={(email) => (
          <tr>
            <td>
              <Address value={email.from} />
            </td>
            <td>
              <Addresses values={email.to} />
            </td>
            <td>
              <a href={href('receiving', email.id)}>{email.subject || '(no subject)'}</a>
            </td>
            <td>
              <When at={email.created_at} />
            </td>
            <td class="num">{email.attachments.length}</td>
            <td>
              <Verdicts email={email} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
