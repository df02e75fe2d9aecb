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
