/**
 * Bundled IN PLACE OF `@aws-sdk/endpoint-cache` (an esbuild alias, lib/bundling.ts): the same
 * class on a Map, without mnemonist's typed-array LRU (7 KB, and arrays for 1,000 entries
 * allocated by every DynamoDB client at construction). DynamoDB's client builds one for endpoint
 * discovery, which none of its operations uses today (discovery is off unless
 * AWS_ENABLE_ENDPOINT_DISCOVERY says otherwise); should one use it, this works the same way:
 * entries expire with their CachePeriodInMinutes, and the least recently used is dropped past
 * `capacity`. `implements` holds it to the package's declared API at typecheck time.
 */
import type { EndpointCache as SdkEndpointCache } from '@aws-sdk/endpoint-cache';

interface EndpointWithExpiry {
  Address: string;
  Expires: number;
}

export class EndpointCache implements Omit<SdkEndpointCache, never> {
  private readonly entries = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {}

  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (!endpoints || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]?.Address;
  }

  get(key: string): EndpointWithExpiry[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.entries.get(key);
    if (!value) return undefined;
    // A read makes it the most recently used, as mnemonist's LRU does.
    this.entries.delete(key);
    this.entries.set(key, value);
    const now = Date.now();
    const live = value.filter((endpoint) => now < endpoint.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  set(key: string, endpoints: { Address: string; CachePeriodInMinutes: number }[]): void {
    const now = Date.now();
    this.store(
      key,
      endpoints.map(({ Address, CachePeriodInMinutes }) => ({
        Address,
        Expires: now + CachePeriodInMinutes * 60 * 1000,
      })),
    );
  }

  delete(key: string): void {
    this.store(key, []);
  }

  has(key: string): boolean {
    return (this.entries.get(key)?.length ?? 0) > 0;
  }

  clear(): void {
    this.entries.clear();
  }

  private store(key: string, value: EndpointWithExpiry[]) {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}
