/**
 * The broadcast lane (issue 41): a broadcast's emails wait in a queue of their own and are handed
 * to SES by the same deliver code as every email, with `lane: 'broadcast'` (deliver-deps.ts), which
 * changes three things: their pacing gives transactional mail first claim on the account's rate
 * (deliver-pace.ts BROADCAST_HORIZON_MS); the gate holds back a contact unsubscribed from
 * everything, and gives every one its own one-click unsubscribe headers (deliver-gate.ts); and an
 * email whose broadcast was canceled ends unsent before its claim (this port).
 */

/** Whether a broadcast was canceled, as the lane's consumer asks before each claim. */
export interface BroadcastStates {
  /** True once the broadcast is `canceled`; false otherwise (a broadcast not found included). */
  canceled(broadcastId: string): Promise<boolean>;
}

/** Why an email of a canceled broadcast ends, unsent (its `failure_reason`). */
export const BROADCAST_CANCELED_REASON = 'the broadcast was canceled';
