import type { Clock } from '../shared/ports.js';
import type { TemplateRepository } from './ports.js';

/**
 * The send functions' view of templates: a published version (and an alias's id) kept for
 * `ttlMs` in the function's memory, so a template everyone sends with is not one hot item read
 * by every request (a strongly consistent read of a 20 KB template is 5 read units; a partition
 * serves 3,000 a second). A publish reaches every instance's sends within `ttlMs`; what is not
 * found is never kept, so a template published just now sends at once.
 */
export function cachedForSends(
  templates: TemplateRepository,
  clock: Clock,
  ttlMs = 1_000,
): TemplateRepository {
  if (ttlMs <= 0) return templates;
  const kept = new Map<string, { until: number; value: unknown }>();
  const cached =
    <T>(prefix: string, read: (key: string) => Promise<T | null>) =>
    async (key: string): Promise<T | null> => {
      const now = clock.now().getTime();
      const hit = kept.get(prefix + key);
      if (hit && hit.until > now) return hit.value as T;
      const value = await read(key);
      if (value !== null) {
        if (kept.size >= 500) kept.clear();
        kept.set(prefix + key, { until: now + ttlMs, value });
      }
      return value;
    };
  return Object.assign(Object.create(templates) as TemplateRepository, {
    published: cached('p:', (id) => templates.published(id)),
    idOfAlias: cached('a:', (alias) => templates.idOfAlias(alias)),
  });
}
