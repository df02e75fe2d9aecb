import { useEffect, useState } from 'preact/hooks';

/** The page the hash names: `#/emails/em_…` is `['emails', 'em_…']`; `#/` or none is `[]`. */
export const routeOf = (hash: string): string[] =>
  hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));

export function useRoute(): string[] {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;
