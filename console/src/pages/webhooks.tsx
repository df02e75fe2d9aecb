import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function WebhooksPage({ id }: { id?: string | undefined }) {
  return (
    <>
      <PageHeading>Webhooks{id ? ` (${id})` : ''}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
