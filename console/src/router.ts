import { useEffect, useState } from 'preact/hooks';

/** The hash's path and query: `#/emails/em_…?status=sent` is `['emails', 'em_…']` and `status=sent`. */
const split = (hash: string): [string, string] => {
  const bare = hash.replace(/^#\/?/, '');
  const at = bare.indexOf('?');
  return at < 0 ? [bare, ''] : [bare.slice(0, at), bare.slice(at + 1)];
};

/** The page the hash names: `#/emails/em_…` is `['emails', 'em_…']`; `#/` or none is `[]`. A `?query` is not part of it. */
export const routeOf = (hash: string): string[] =>
  split(hash)[0]
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));

/** The hash's query (`#/emails?recipient=a%40b.test`): a page's filters, kept in the URL so a search can be shared and reloaded. */
export const queryOf = (hash: string): URLSearchParams => new URLSearchParams(split(hash)[1]);

function useHash(): string {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

export function useRoute(): string[] {
  return routeOf(useHash());
}

/**
 * A page's filters in the hash's query, and a setter that writes them there (a new history entry,
 * so Back returns to the previous search). Empty values are left out.
 */
export function useQuery(): [Record<string, string>, (next: Record<string, string | undefined>) => void] {
  const hash = useHash();
  const params = Object.fromEntries(queryOf(hash));
  const set = (next: Record<string, string | undefined>) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) search.set(name, value);
    const text = search.toString();
    location.hash = `#/${split(location.hash)[0]}${text ? `?${text}` : ''}`;
  };
  return [params, set];
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

/** A link to a page with a query: `hrefWith({status: 'sent'}, 'emails')` is `#/emails?status=sent`. */
export const hrefWith = (params: Record<string, string | undefined>, ...parts: string[]) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return `${href(...parts)}${text ? `?${text}` : ''}`;
};
