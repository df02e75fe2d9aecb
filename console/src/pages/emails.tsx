import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function EmailsPage() {
  return (
    <>
      <PageHeading>Emails</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
