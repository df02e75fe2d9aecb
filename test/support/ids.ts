import { encodeBase32 } from '../../functions/shared/ids.js';

/** An email id as if the email had been accepted at `ms` (a UUIDv7 of that millisecond). */
export function emailIdCreatedAt(ms: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  for (let i = 5, t = ms; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256;
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  return `em_${encodeBase32(bytes)}`;
}
