import { Resolver } from 'node:dns/promises';
import type { DnsLookup } from '../../domains/ports.js';

/** DNS answers that mean "no such record" rather than "cannot tell now". */
const ABSENT = new Set(['ENODATA', 'ENOTFOUND']);

const absentAsEmpty = (error: unknown): string[] => {
  if (error instanceof Error && ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return [];
  throw error;
};

/**
 * The tracking records as public DNS has them, through the resolver Lambda's network gives (1 s a
 * try, two tries; the caller also bounds the whole lookup: DNS_WAIT_MS).
 */
export class PublicDns implements DnsLookup {
  private readonly resolver = new Resolver({ timeout: 1_000, tries: 2 });

  cname(name: string): Promise<string[]> {
    return this.resolver.resolveCname(name).catch(absentAsEmpty);
  }

  async caaIssuers(name: string): Promise<string[]> {
    const records = await this.resolver.resolveCaa(name).catch(absentAsEmpty);
    return records.flatMap((r) => (typeof r === 'string' ? [] : r.issue ? [r.issue] : []));
  }
}

/**
 * Locally nothing is published anywhere: DNS as if the owner had published every record the
 * service asked for (the local twin of a domain whose owner did their part), so tracking through
 * the tracking host works after `npm start` as on AWS once DNS is done.
 */
export class PublishedDns implements DnsLookup {
  constructor(private readonly trackingTarget: string) {}

  async cname(): Promise<string[]> {
    return [this.trackingTarget];
  }

  async caaIssuers(): Promise<string[]> {
    return [];
  }
}
