import { Empty, PageHeading } from '../components.js';

/** Placeholder: this page is being built. */
export function ApiKeysPage() {
  return (
    <>
      <PageHeading>API keys{''}</PageHeading>
      <Empty title="This page is coming." />
    </>
  );
}
