import { type ComponentChildren, Fragment } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.js';

/** An API failure (or any error) in words, with what to do. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const failure =
    error instanceof ApiFailure
      ? error
      : new ApiFailure(0, 'error', error instanceof Error ? error.message : String(error), 'Try again.');
  return (
    <div class="error" role="alert">
      <p>
        <strong>{failure.message}</strong>
      </p>
      <p>{failure.advice}</p>
    </div>
  );
}

/**
 * An address from the API's data that may be a link: http or https only (never `javascript:`,
 * `data:` or anything else a link could run or open in the console's origin).
 */
export function webUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The key has sending access only: a page's forms are of no use to it (the message says why). */
export const restricted = (error: unknown) =>
  error instanceof ApiFailure && error.status === 403 && error.name === 'restricted_api_key';

/** What a page shows when there is nothing yet: how to start. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

export const Loading = () => (
  <p class="muted" aria-live="polite">
    Loading…
  </p>
);

/** A page's heading, focused when the page opens so a screen reader hears where it is. */
export function PageHeading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Refusals that asking again will not change: the key, its access or the thing itself. */
const FINAL = new Set([401, 403, 404]);
/** The longest wait between refreshes after failures in a row. */
const MAX_REFRESH_MS = 60_000;

/**
 * Loads what `load` answers, again when `deps` change, and `refreshMs` after each answer while the
 * page is open and the tab visible (the last good answer stays on screen while a refresh runs). A
 * refusal that will not change (401, 403, 404) stops the refreshes; other failures double the wait,
 * up to a minute, until an answer comes again.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], refreshMs?: number): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const failures = useRef(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        failures.current = 0;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure) => {
        if (!live) return;
        failures.current++;
        setError(failure);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  useEffect(() => {
    if (!refreshMs || loading) return;
    if (error instanceof ApiFailure && FINAL.has(error.status)) return;
    const wait = Math.min(refreshMs * 2 ** failures.current, Math.max(refreshMs, MAX_REFRESH_MS));
    let timer: ReturnType<typeof setTimeout>;
    const arm = () => {
      timer = setTimeout(() => (document.visibilityState === 'visible' ? reload() : arm()), wait);
    };
    arm();
    return () => clearTimeout(timer);
  }, [refreshMs, loading, error, reload]);
  // Data of other deps is not shown under new ones.
  useEffect(() => () => setData(undefined), deps);
  return { data, error, loading, reload };
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A time for people, with the exact ISO time in a `<time>` element. */
export function When({ at }: { at: string | undefined | null }) {
  if (!at) return <span class="muted">—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {Number.isNaN(date.getTime()) ? at : dateTime.format(date)}
    </time>
  );
}

export function Status({ value }: { value: string | undefined }) {
  if (!value) return <span class="muted">—</span>;
  return <span class={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value.replace(/_/g, ' ')}</span>;
}

/**
 * A copy-to-clipboard button for a value (the value itself stays visible beside it). What happened
 * is said in a live region beside it, so a screen reader hears "Copied" (or why not) too.
 */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [said, setSaid] = useState<'' | 'Copied' | 'Copy failed: select the value and copy it'>('');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return (
    <>
      <button
        type="button"
        class="small"
        aria-label={`Copy ${label}`}
        onClick={async () => {
          clearTimeout(timer.current);
          try {
            await navigator.clipboard.writeText(value);
            setSaid('Copied');
            timer.current = setTimeout(() => setSaid(''), 2000);
          } catch {
            setSaid('Copy failed: select the value and copy it');
          }
        }}
      >
        Copy
      </button>{' '}
      <span role="status" class={said === 'Copied' ? 'muted' : 'copy-failed'}>
        {said}
      </span>
    </>
  );
}

/**
 * An email address (or `Name <address>`) that may break only where a reader expects it: after a
 * space or the `@`, and before a dot; never inside a word, nor at a hyphen (which would read as
 * hyphenation). Each piece keeps together (`address` in styles.css); `<wbr>` marks where it may break.
 */
export function Address({ value }: { value: string }) {
  const parts = value.split(/(?<=[ @])|(?=\.)/);
  return (
    <span class="address">
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          <span>{part}</span>
        </Fragment>
      ))}
    </span>
  );
}

/** Addresses, comma-separated, each an `Address`; `—` for none. */
export function Addresses({ values }: { values: readonly string[] | null | undefined }) {
  if (!values?.length) return <span class="muted">—</span>;
  return (
    <>
      {values.map((value, i) => (
        <Fragment key={`${i}-${value}`}>
          {i > 0 && ', '}
          <Address value={value} />
        </Fragment>
      ))}
    </>
  );
}
