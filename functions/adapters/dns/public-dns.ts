import type { CaaRecord, MxRecord } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import type { DnsLookup } from '../../domains/ports.js';
import { inboundSmtpHost } from '../../domains/receiving-regions.js';

/** DNS answers that mean "no such record" rather than "cannot tell now". */
const ABSENT = new Set(['ENODATA', 'ENOTFOUND']);

const absentAsEmpty = <T>(error: unknown): T[] => {
  if (error instanceof Error && ABSENT.has((error as NodeJS.ErrnoException).code ?? '')) return [];
  throw error;
};

/**
 * The tracking and receiving records as public DNS has them, through the resolver Lambda's network
 * gives (1 s a try, two tries; the caller also bounds the whole lookup: DNS_WAIT_MS).
 */
export class PublicDns implements DnsLookup {
  private readonly resolver = new Resolver({ timeout: 1_000, tries: 2 });

  /** `servers`: resolvers to ask instead of the system's (tests). */
  constructor(servers?: string[]) {
    if (servers) this.resolver.setServers(servers);
  }

  mx(name: string): Promise<{ exchange: string; priority: number }[]> {
    return this.resolver.resolveMx(name).catch(absentAsEmpty<MxRecord>);
  }

  cname(name: string): Promise<string[]> {
    return this.resolver.resolveCname(name).catch(absentAsEmpty<string>);
  }

  async caaIssuers(name: string): Promise<string[]> {
    const records = await this.resolver.resolveCaa(name).catch(absentAsEmpty<CaaRecord>);
    return records.flatMap((r) => (typeof r === 'string' ? [] : r.issue ? [r.issue] : []));
  }
}

/**
 * Locally nothing is published anywhere: DNS as if the owner had published every record the
 * service asked for (the local twin of a domain whose owner did their part), so tracking through
 * the tracking host works after `npm start` as on AWS once DNS is done, and a receiving domain's MX
 * is the inbound host of the Region (the local SMTP twin stands for it).
 */
export class PublishedDns implements DnsLookup {
  constructor(
    private readonly trackingTarget: string | undefined,
    private readonly region: string,
  ) {}

  async mx(): Promise<{ exchange: string; priority: number }[]> {
    return [{ exchange: inboundSmtpHost(this.region), priority: 10 }];
  }

  async cname(): Promise<string[]> {
    return this.trackingTarget ? [this.trackingTarget] : [];
  }

  async caaIssuers(): Promise<string[]> {
    return [];
  }
}
