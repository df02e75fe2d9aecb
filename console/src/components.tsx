import type { ComponentChildren } from 'preact';
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

/**
 * Loads what `load` answers, again when `deps` change, and every `refreshMs` while the page is
 * open and the tab visible (the last good answer stays on screen while a refresh runs).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], refreshMs?: number): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure) => {
        if (!live) return;
        setError(failure);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, reload]);
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

/** A copy-to-clipboard button for a value (the value itself stays visible beside it). */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="small"
      aria-label={`Copy ${label}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
