import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function LogsPage({ id }: { id?: string | undefined }) {
  return (
    <>
      <PageHeading>Logs{id ? ` (${id})` : ''}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
