/**
 * Where the service may connect on a user's behalf (webhook endpoints): public unicast addresses
 * only. Loopback, private (10/8, 172.16/12, 192.168/16), link-local (169.254/16, where the
 * instance metadata endpoint lives; fe80::/10), unique-local (fc00::/7), carrier-grade NAT,
 * multicast, reserved and unspecified addresses are refused, and so are IPv6 forms that carry an
 * IPv4 address inside (IPv4-mapped is unwrapped and checked; 6to4, Teredo and NAT64 are refused).
 * An IPv6 address must also be global unicast (2000::/3, all IANA has allocated): that refuses the
 * deprecated IPv4-compatible form (`::a9fe:a9fe` is 169.254.169.254), which ipaddr.js calls
 * unicast, and whatever else lies in reserved space. ipaddr.js (the library Express uses for the
 * same question) classifies the ranges.
 */
import ipaddr from 'ipaddr.js';

export interface TargetPolicy {
  /** Local development only: plain http and loopback addresses (127.0.0.0/8, ::1, localhost). */
  allowLoopback: boolean;
}

/** IPv6 global unicast: every IPv6 address IANA has allocated for use on the internet. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Why the service must not connect to this IP address, or undefined when it may. */
export function addressProblem(ip: string, policy: TargetPolicy): string | undefined {
  if (!ipaddr.isValid(ip)) return `${ip} is not an IP address`;
  let parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range === 'unicast' && parsed.kind() === 'ipv6' && !parsed.match(GLOBAL_UNICAST_V6))
    return `${ip} is not a global unicast IPv6 address (IPv4-compatible or reserved), which the service does not connect to`;
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && policy.allowLoopback) return undefined;
  return `${ip} is a ${range} address, which the service does not connect to`;
}

/** A URL's host without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * What is wrong with an endpoint URL before any name is resolved: `https` only (plain `http` only
 * to a loopback host where the policy allows it), no credentials in it, and no IP literal the
 * address check refuses.
 */
export function urlProblem(endpoint: string, policy: TargetPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be an absolute URL (https://…)';
  }
  const host = hostOf(url);
  const literal = ipaddr.isValid(host);
  const loopbackHost = isLoopbackName(host) || (literal && ipaddr.process(host).range() === 'loopback');
  if (url.protocol === 'http:') {
    if (!(policy.allowLoopback && loopbackHost))
      return policy.allowLoopback
        ? 'must use https (plain http is allowed only to localhost, for local development)'
        : 'must use https';
  } else if (url.protocol !== 'https:') return 'must use https';
  if (url.username || url.password)
    return 'must not carry credentials; receivers authenticate messages by their signature';
  if (isLoopbackName(host) && !policy.allowLoopback) return `${host} is a loopback name`;
  if (literal) return addressProblem(host, policy);
  return undefined;
}
