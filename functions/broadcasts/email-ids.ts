import { createHash } from 'node:crypto';
import { encodeBase32 } from '../shared/ids.js';

/**
 * The id of the email a broadcast makes for one contact: an email id (`em_…`, a UUIDv7 in TypeID
 * form) whose 48-bit time is the fan-out's start (FanOutProgress `members_before`, fixed for the
 * send) and whose other bits are a digest of (broadcast id, contact id), with the UUID's version and
 * variant bits set. So whichever page a contact falls in, first try or redone after a crash, its
 * email has the very same id, and EmailRepository.createMany(…, { mayExist: true }) leaves the
 * emails already made as they are: one email per contact, never two. The email sorts (and its
 * webhooks' `created_at` reads) as made when the broadcast's sending began.
 */
export function broadcastEmailId(broadcastId: string, contactId: string, startedAtMs: number): string {
  const bytes = new Uint8Array(16);
  let t = Math.max(0, Math.floor(startedAtMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  const digest = createHash('sha256').update(`${broadcastId}\u0000${contactId}`).digest();
  for (let i = 6; i < 16; i++) bytes[i] = digest[i - 6] as number;
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70; // version 7
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80; // RFC 9562 variant
  return `em_${encodeBase32(bytes)}`;
}
