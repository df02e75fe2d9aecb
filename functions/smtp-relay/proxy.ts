import { isIP } from 'node:net';

/**
 * The PROXY protocol version 2 header (haproxy's spec, "2.2. Binary header format"), which a Network
 * Load Balancer's target group with `proxy_protocol_v2.enabled` puts before a connection's first
 * byte: it carries the client's address, which the task would otherwise see as the NLB's. smtp-server
 * reads only version 1 (a text line), so the relay reads this itself before smtp-server sees the
 * socket.
 */
export const PROXY_V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);

/** The most a header may take: 16 fixed bytes and at most this many of addresses and TLVs. */
const MAX_PAYLOAD = 4096;

export type ProxyHeader =
  /** More bytes are needed. */
  | { complete: false }
  /** The header, `consumed` bytes long; `source` absent for a LOCAL command (the proxy's own connection, a health check). */
  | { complete: true; consumed: number; source?: { address: string; port: number } };

export class ProxyHeaderError extends Error {}

/** Reads a PROXY v2 header from the bytes received so far; throws ProxyHeaderError for anything else. */
export function readProxyV2(bytes: Buffer): ProxyHeader {
  const signature = Math.min(bytes.length, PROXY_V2_SIGNATURE.length);
  if (!bytes.subarray(0, signature).equals(PROXY_V2_SIGNATURE.subarray(0, signature)))
    throw new ProxyHeaderError('not a PROXY protocol v2 header');
  if (bytes.length < 16) return { complete: false };
  const versionCommand = bytes[12] as number;
  if (versionCommand >> 4 !== 2) throw new ProxyHeaderError('PROXY protocol version is not 2');
  const command = versionCommand & 0x0f;
  const length = bytes.readUInt16BE(14);
  if (length > MAX_PAYLOAD) throw new ProxyHeaderError('PROXY header too long');
  if (bytes.length < 16 + length) return { complete: false };
  const consumed = 16 + length;
  if (command === 0) return { complete: true, consumed };
  if (command !== 1) throw new ProxyHeaderError('unknown PROXY command');
  const family = (bytes[13] as number) >> 4;
  const payload = bytes.subarray(16, consumed);
  if (family === 1) {
    if (length < 12) throw new ProxyHeaderError('PROXY header too short for IPv4');
    const address = [...payload.subarray(0, 4)].join('.');
    return { complete: true, consumed, source: { address, port: payload.readUInt16BE(8) } };
  }
  if (family === 2) {
    if (length < 36) throw new ProxyHeaderError('PROXY header too short for IPv6');
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(payload.readUInt16BE(i).toString(16));
    const address = groups.join(':');
    if (!isIP(address)) throw new ProxyHeaderError('PROXY header with a bad IPv6 address');
    return { complete: true, consumed, source: { address, port: payload.readUInt16BE(32) } };
  }
  // UNSPEC or a UNIX socket: no address to use; the connection's own stands.
  return { complete: true, consumed };
}

/** A PROXY v2 header as an NLB sends it (for tests and the local twin): PROXY over TCP from `source`. */
export function proxyV2Header(
  source: { address: string; port: number },
  destination: { address: string; port: number },
): Buffer {
  const v6 = isIP(source.address) === 6;
  const addresses = v6
    ? Buffer.concat([ipv6Bytes(source.address), ipv6Bytes(destination.address)])
    : Buffer.from([...source.address.split('.'), ...destination.address.split('.')].map(Number));
  const ports = Buffer.alloc(4);
  ports.writeUInt16BE(source.port, 0);
  ports.writeUInt16BE(destination.port, 2);
  const head = Buffer.alloc(4);
  head[0] = 0x21;
  head[1] = v6 ? 0x21 : 0x11;
  head.writeUInt16BE(addresses.length + 4, 2);
  return Buffer.concat([PROXY_V2_SIGNATURE, head, addresses, ports]);
}

function ipv6Bytes(address: string): Buffer {
  const [left = '', right] = address.split('::');
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const groups = [...head, ...new Array(8 - head.length - tail.length).fill('0'), ...tail];
  const out = Buffer.alloc(16);
  groups.forEach((group, i) => {
    out.writeUInt16BE(Number.parseInt(group || '0', 16), i * 2);
  });
  return out;
}
