import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { addressProblem, type TargetPolicy } from '../../shared/targets.js';

/** How a host name becomes addresses (the system's resolver; a stand-in in tests and locally). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Every address the host resolves to, or why it may not be used: one address the policy refuses
 * (private, loopback, link-local where the metadata endpoint lives…: shared/targets.ts) refuses
 * the host.
 */
export async function checkedAddresses(
  host: string,
  policy: TargetPolicy,
  resolve: Resolve,
): Promise<LookupAddress[] | string> {
  let found: LookupAddress[];
  try {
    found = await resolve(host);
  } catch (error) {
    return `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (!found.length) return `${host} does not resolve`;
  for (const { address } of found) {
    const problem = addressProblem(address, policy);
    if (problem) return `${host} resolves to ${problem}`;
  }
  return found;
}

/**
 * A connection's own lookup for calls on a user's behalf: resolved and checked inside the socket's
 * lookup, so the address connected to is the address checked (a name that resolves to a public
 * address when it is saved and to 10.0.0.1 later, DNS rebinding, is refused then). A refused host
 * fails the connection with `EADDRNOTALLOWED`.
 */
export function guardedLookup(policy: TargetPolicy, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, policy, resolve).then(
      (found) => {
        if (typeof found === 'string') {
          const error: NodeJS.ErrnoException = new Error(found);
          error.code = 'EADDRNOTALLOWED';
          callback(error, '', 0);
        } else if (options.all) callback(null, found);
        else callback(null, found[0]?.address ?? '', found[0]?.family ?? 4);
      },
      (error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}
