import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function SuppressionsPage() {
  return (
    <>
      <PageHeading>Suppressions{''}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
