/**
 * What a deleted contact, segment or topic leaves behind, removed off the request path by the
 * audience clean-up worker (contacts/workers.ts) from the AUDIENCE_CLEANUP_QUEUE: a contact's
 * memberships and choices (its CONTACTOF partition), a segment's memberships or a topic's choices
 * (their listing-index partitions, CONTACT_SHARDS of them). A job too large for one run carries on
 * in a job of its own (`shard`, `cursor`: where it stopped), so a million memberships never hold a
 * function near its timeout.
 */
export type CleanupJob =
  | { readonly kind: 'contact'; readonly contact_id: string; readonly cursor?: string }
  | {
      readonly kind: 'segment';
      readonly segment_id: string;
      readonly shard?: number;
      readonly cursor?: string;
    }
  | { readonly kind: 'topic'; readonly topic_id: string; readonly shard?: number; readonly cursor?: string };

/** Where the concepts that delete hand their clean-up (an SQS queue on AWS and locally). */
export interface AudienceCleanup {
  enqueue(job: CleanupJob): Promise<void>;
}
