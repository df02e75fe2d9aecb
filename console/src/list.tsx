import { type ComponentChildren, Fragment } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Empty, ErrorNote, type Loaded, Loading, restricted, useLoad } from './components.js';
import { type PageCursor, Pager, pagerState } from './pager.js';
import './list.css';

/** A page of a list, as the API answers it. */
export interface ListPage<Item> {
  has_more: boolean;
  data: Item[];
}

/** A list the API pages by cursor, with its filter ('' for none): a new filter starts at the first page. */
export interface PagedList<Item> extends Loaded<ListPage<Item>> {
  filter: string;
  setFilter: (filter: string) => void;
  cursor: PageCursor;
  setCursor: (cursor: PageCursor) => void;
}

/** `useLoad` for a list paged by cursor: `load` is asked for the filter and page shown. */
export function usePagedList<Item>(
  load: (filter: string, cursor: PageCursor) => Promise<ListPage<Item>>,
  deps: unknown[],
  refreshMs?: number,
): PagedList<Item> {
  const [{ filter, cursor }, setPlace] = useState<{ filter: string; cursor: PageCursor }>({
    filter: '',
    cursor: undefined,
  });
  const loaded = useLoad(
    () => load(filter, cursor),
    [...deps, filter, cursor && JSON.stringify(cursor)],
    refreshMs,
  );
  return {
    ...loaded,
    filter,
    cursor,
    setFilter: (next) => setPlace({ filter: next, cursor: undefined }),
    setCursor: (next) => setPlace((place) => ({ ...place, cursor: next })),
  };
}

/** A column's header: its name, or an object for a right-aligned (`num`) or unnamed-on-screen one. */
export type Column = string | { label: string; class?: string; hidden?: boolean };

/** A column's name and whether it is shown on screen (a column of buttons has a name for screen readers only). */
const columnOf = (column: Column) =>
  typeof column === 'string' ? { label: column, hidden: false } : { hidden: false, ...column };

/**
 * Each body cell gets its column's name in `data-label`, which a narrow screen shows beside the
 * value when the rows become cards (lists.css), and each part of the table its role: a table shown
 * as blocks loses its table semantics in some browsers, so they are said. Kept true as rows come
 * and go (a MutationObserver), since a row may render again without the table.
 */
function useCardLabels(columns: Column[]) {
  const ref = useRef<HTMLTableElement>(null);
  const labels = columns.map(columnOf);
  const key = JSON.stringify(labels);
  useLayoutEffect(() => {
    const table = ref.current;
    if (!table) return;
    const label = () => {
      table.setAttribute('role', 'table');
      for (const group of table.querySelectorAll(':scope > thead, :scope > tbody'))
        group.setAttribute('role', 'rowgroup');
      for (const row of table.querySelectorAll(':scope > thead > tr, :scope > tbody > tr')) {
        row.setAttribute('role', 'row');
        let at = 0;
        for (const cell of row.children) {
          const column = labels[at];
          at += Number(cell.getAttribute('colspan') ?? 1);
          const header = cell.tagName === 'TH';
          const scope = cell.getAttribute('scope');
          cell.setAttribute('role', header ? (scope === 'row' ? 'rowheader' : 'columnheader') : 'cell');
          if (row.parentElement?.tagName !== 'TBODY') continue;
          if (column && !column.hidden && !header) cell.setAttribute('data-label', column.label);
          else cell.removeAttribute('data-label');
        }
      }
    };
    label();
    const observer = new MutationObserver(label);
    observer.observe(table, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [key]);
  return ref;
}

/**
 * A table with a header row of `columns`; the rows are the children. Below 600 px each row is a
 * card of its cells, each under its column's name (lists.css), so no list scrolls sideways on a phone.
 */
export function Table({
  columns,
  caption,
  captionClass,
  children,
}: {
  columns: Column[];
  caption?: string;
  captionClass?: string;
  children: ComponentChildren;
}) {
  const ref = useCardLabels(columns);
  return (
    <div class="table-wrap">
      <table ref={ref}>
        {caption && <caption class={captionClass}>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column) => {
              const {
                label,
                class: className,
                hidden,
              } = typeof column === 'string' ? { label: column } : column;
              return (
                <th key={label} scope="col" class={className}>
                  {hidden ? <span class="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The select a list is filtered by: "any" first, then the values (the server's vocabulary). */
export interface ListFilter {
  id: string;
  label: string;
  /** The choice of no filter ("Any status"). */
  any: string;
  values: readonly string[];
  /** What each value is called on screen, when not itself (a segment's name for its id). */
  labels?: Readonly<Record<string, string>>;
}

/** A list's filter as a labelled select: "any" first, then the values; `name` for a form that reads it. */
export function FilterSelect({
  filter,
  value,
  onChange,
  name,
}: {
  filter: ListFilter;
  value: string;
  onChange: (value: string) => void;
  name?: string;
}) {
  return (
    <div>
      <label for={filter.id}>{filter.label}</label>
      <select
        id={filter.id}
        name={name}
        value={value}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        <option value="">{filter.any}</option>
        {filter.values.map((v) => (
          <option key={v} value={v}>
            {filter.labels?.[v] ?? v}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The items as table rows (the page's `<tr>`s, under `columns`), or as entries of a `<ul>`. */
type Layout<Item> =
  | { columns: Column[]; row: (item: Item) => ComponentChildren; caption?: string; captionClass?: string }
  | { entries: (item: Item) => ComponentChildren; entriesClass: string };

/** Which way to more: a pager over a paged list (and its filter), or a note that only the first page is shown. */
type Paging<Item> =
  | { list: PagedList<Item>; filter?: ListFilter; more?: never }
  | { list: Loaded<ListPage<Item>>; filter?: never; more?: string };

type ListProps<Item> = Paging<Item> &
  Layout<Item> & {
    /** Shown in the toolbar after the filter (a note, a button). */
    tools?: ComponentChildren;
    /** What an empty list says (for the filter shown); none: an empty list shows nothing. */
    empty?: { title: string; help?: ComponentChildren };
    /** No "Loading…": a list inside another's entry, loaded beside it. */
    quiet?: boolean;
  };

/**
 * Every list of the console, one way: its filter, "Loading…", the API's refusal, what to say when
 * it is empty, its table (or entries) and its pager. A page gives what is its own: how to load it,
 * its filter's values, its columns and rows, its empty state's words, and its actions around it.
 * A key that may not read the list (sending access) gets no filter or tools, only the refusal.
 */
export function List<Item extends { id: string }>(props: ListProps<Item>) {
  const { list, filter, tools, empty, quiet } = props;
  const paged = 'setCursor' in list ? list : undefined;
  const data = list.data?.data ?? [];
  const items = (render: (item: Item) => ComponentChildren) =>
    data.map((item) => <Fragment key={item.id}>{render(item)}</Fragment>);
  return (
    <>
      {(filter || tools) && !restricted(list.error) && (
        <div class="toolbar">
          {filter && paged && (
            <FilterSelect filter={filter} value={paged.filter} onChange={paged.setFilter} />
          )}
          {tools}
        </div>
      )}
      <ErrorNote error={list.error} />
      {!quiet && !list.data && list.loading && <Loading />}
      {empty && list.data && data.length === 0 && <Empty title={empty.title}>{empty.help}</Empty>}
      {'entries' in props ? (
        <ul class={props.entriesClass}>{items(props.entries)}</ul>
      ) : (
        data.length > 0 && (
          <Table columns={props.columns} caption={props.caption} captionClass={props.captionClass}>
            {items(props.row)}
          </Table>
        )
      )}
      {paged ? (
        <Pager {...pagerState(paged.data, paged.cursor)} onPage={paged.setCursor} />
      ) : (
        props.more && list.data?.has_more && <p class="muted">{props.more}</p>
      )}
    </>
  );
}
