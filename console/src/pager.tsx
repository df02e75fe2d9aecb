/** A cursor of the API's lists: the page after (older than) or before (newer than) an id. */
export type PageCursor = { after: string } | { before: string } | undefined;

/**
 * Which way a cursor list may go. `has_more` is about the page's own direction: older ones for a
 * first page or `after`, newer ones for `before`.
 */
export function pagerState(
  list: { has_more: boolean; data: { id: string }[] } | undefined,
  cursor: PageCursor,
) {
  const data = list?.data ?? [];
  const first = data[0]?.id;
  const last = data[data.length - 1]?.id;
  return {
    newer: cursor === undefined ? undefined : 'before' in cursor && !list?.has_more ? undefined : first,
    older: cursor !== undefined && 'before' in cursor ? last : list?.has_more ? last : undefined,
  };
}

/** "Newer" and "Older" buttons over a cursor list. */
export function Pager({
  newer,
  older,
  onPage,
}: {
  newer: string | undefined;
  older: string | undefined;
  onPage: (cursor: PageCursor) => void;
}) {
  if (!newer && !older) return null;
  return (
    <div class="pager">
      <button
        type="button"
        class="secondary"
        disabled={!newer}
        onClick={() => newer && onPage({ before: newer })}
      >
        Newer
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!older}
        onClick={() => older && onPage({ after: older })}
      >
        Older
      </button>
    </div>
  );
}
