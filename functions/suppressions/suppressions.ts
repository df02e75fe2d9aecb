import { parseAddress } from '../shared/address.js';
import { notFound } from '../shared/errors.js';
import { isId } from '../shared/ids.js';
import type { Clock } from '../shared/ports.js';
import { newSuppressionId, SUPPRESSION_ID_PREFIX } from './model.js';
import type { ProviderSuppressions, Suppression, SuppressionRepository } from './ports.js';

export interface SuppressionDeps {
  suppressions: SuppressionRepository;
  /** SES's account-level list, kept in step when an address is removed. */
  providerSuppressions: ProviderSuppressions;
  clock: Clock;
}

/** Adds addresses by hand (`origin: "manual"`); an address already on the list keeps its entry. */
export async function addSuppressions(
  deps: Pick<SuppressionDeps, 'suppressions' | 'clock'>,
  emails: string[],
): Promise<{ entry: Suppression; added: boolean }[]> {
  const created_at = deps.clock.now().toISOString();
  const unique = [...new Set(emails)];
  const results = new Map(
    await Promise.all(
      unique.map(
        async (email) =>
          [
            email,
            await deps.suppressions.add({
              id: newSuppressionId(),
              email,
              origin: 'manual',
              source_id: null,
              created_at,
            }),
          ] as const,
      ),
    ),
  );
  return emails.map((email) => results.get(email) as { entry: Suppression; added: boolean });
}

/** An entry by its id (`sup_…`) or its address; 404 when the list has none. */
export async function getSuppression(
  deps: Pick<SuppressionDeps, 'suppressions'>,
  idOrEmail: string,
): Promise<Suppression> {
  const entry = await find(deps, idOrEmail);
  if (!entry) throw notFound(`Suppression ${JSON.stringify(idOrEmail)} not found.`);
  return entry;
}

async function find(deps: Pick<SuppressionDeps, 'suppressions'>, idOrEmail: string) {
  if (isId(SUPPRESSION_ID_PREFIX, idOrEmail)) return deps.suppressions.get(idOrEmail);
  const parsed = parseAddress(idOrEmail);
  return 'error' in parsed ? null : deps.suppressions.get(parsed.email.toLowerCase());
}

/**
 * Takes an address off the list, and off SES's account-level list first: were it left there, SES
 * would bounce the next send to it anyway. When SES cannot be reached the entry stays (the error
 * goes to the caller, who can try again), so the two lists never disagree the other way round.
 */
export async function removeSuppression(
  deps: SuppressionDeps,
  idOrEmail: string,
): Promise<{ entry: Suppression | null; deleted: boolean }> {
  const entry = await find(deps, idOrEmail);
  if (!entry) return { entry: null, deleted: false };
  await deps.providerSuppressions.remove(entry.email);
  return { entry, deleted: await deps.suppressions.remove(entry) };
}

/** Removes one; 404 when the list has no such entry. */
export async function removeOneSuppression(deps: SuppressionDeps, idOrEmail: string): Promise<Suppression> {
  const { entry, deleted } = await removeSuppression(deps, idOrEmail);
  if (!entry || !deleted) throw notFound(`Suppression ${JSON.stringify(idOrEmail)} not found.`);
  return entry;
}

/** Removes each (a few at a time, so SES's per-second limits are not hit all at once). */
export async function removeSuppressions(
  deps: SuppressionDeps,
  idsOrEmails: string[],
): Promise<{ given: string; entry: Suppression | null; deleted: boolean }[]> {
  const results: { given: string; entry: Suppression | null; deleted: boolean }[] = [];
  for (let i = 0; i < idsOrEmails.length; i += 5) {
    const chunk = idsOrEmails.slice(i, i + 5);
    results.push(
      ...(await Promise.all(
        chunk.map(async (given) => ({ given, ...(await removeSuppression(deps, given)) })),
      )),
    );
  }
  return results;
}
