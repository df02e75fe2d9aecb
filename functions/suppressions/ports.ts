import type { PageQuery } from '../shared/list.js';

/** Why a recipient was left out: what put its address on the suppression list. */
export type SuppressedReason = 'previous_bounce' | 'previous_complaint' | 'manual';

/** Where an address on the suppression list came from. */
export const SUPPRESSION_ORIGINS = ['bounce', 'complaint', 'manual'] as const;

export type SuppressionOrigin = (typeof SUPPRESSION_ORIGINS)[number];

export const suppressedReason = (origin: SuppressionOrigin): SuppressedReason =>
  origin === 'bounce' ? 'previous_bounce' : origin === 'complaint' ? 'previous_complaint' : 'manual';

/** An address never mailed again until it is removed (Resend's suppression object). */
export interface Suppression {
  id: string;
  /** Lower-cased bare address. */
  email: string;
  origin: SuppressionOrigin;
  /** The email whose bounce or complaint put it there (null when added by hand). */
  source_id: string | null;
  created_at: string;
}

export interface SuppressionRepository {
  /** Puts it on the list unless the address is there already; answers the entry that stands. */
  add(entry: Suppression): Promise<{ entry: Suppression; added: boolean }>;
  /** The entries of these addresses that exist (keyed by lower-cased address), in one batch read. */
  find(emails: string[]): Promise<Map<string, Suppression>>;
  /** By id (`sup_…`) or by address. */
  get(idOrEmail: string): Promise<Suppression | null>;
  /** Newest first. */
  list(
    query: PageQuery & { origin?: SuppressionOrigin },
  ): Promise<{ data: Suppression[]; has_more: boolean }>;
  /** Takes it off the list; false when it was not there. */
  remove(entry: Suppression): Promise<boolean>;
}

/** The provider's own suppression list (SES's account-level list on AWS), kept in step with ours. */
export interface ProviderSuppressions {
  /** Takes the address off it; no error when it is not there. */
  remove(email: string): Promise<void>;
}
