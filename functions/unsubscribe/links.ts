import type { KeySet } from './keys.js';
import { signToken } from './token.js';

/**
 * The unsubscribe link of one recipient of one email (issue 40): what the send path puts in
 * `List-Unsubscribe` and what a broadcast's `{{{RESEND_UNSUBSCRIBE_URL}}}` becomes. The token in it
 * is signed (unsubscribe/token.ts) with the newest key of the keys' secret, read at run time.
 */
export interface UnsubscribeLinkInput {
  /** The recipient's address (lower-cased in the token). */
  readonly address: string;
  /** The email's topic; null: a global unsubscribe. */
  readonly topicId: string | null;
  readonly emailId: string;
}

export interface UnsubscribeLinks {
  /** `https://<PUBLIC_ORIGIN>/unsubscribe/<token>`. */
  url(input: UnsubscribeLinkInput): Promise<string>;
}

/** The links of the send path and broadcasts: tokens signed with the keys' newest signing key (token.ts). */
export class SignedUnsubscribeLinks implements UnsubscribeLinks {
  constructor(
    private readonly deps: {
      /** `https://host` (PUBLIC_ORIGIN): where the links point. */
      readonly origin: string;
      readonly keys: () => Promise<KeySet>;
      readonly now?: () => Date;
    },
  ) {}

  async url(input: UnsubscribeLinkInput): Promise<string> {
    const token = signToken(await this.deps.keys(), input, this.deps.now?.() ?? new Date());
    return `${this.deps.origin.replace(/\/+$/, '')}/unsubscribe/${token}`;
  }
}
