import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function EmailPage({ id }: { id: string }) {
  return (
    <>
      <PageHeading>Email {id}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
