import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function DomainsPage({ id }: { id?: string | undefined }) {
  return (
    <>
      <PageHeading>Domains{id ? ` (${id})` : ''}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
