import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function OverviewPage() {
  return (
    <>
      <PageHeading>Overview</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
