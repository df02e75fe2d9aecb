import type { DeliverDeps } from './deliver-deps.js';
import type { Unsent } from './deliver-gate.js';
import { endEmail } from './end.js';
import { lostReason, settledStatus } from './status.js';

/**
 * Records each recipient of an email with `topic_id` whose own message SES did not take (after the
 * first, which it did: the email is sent) as a final outcome, `failed`, with why: it counts as a
 * recipient that did not get the email, so once the others have their outcomes the email settles
 * (`bounced`, "did not reach k of n") instead of waiting for the sweeper. One whose outcome is
 * unknown (SES may have it) is only logged: SES's events, or the sweeper, tell. A failed write is
 * logged (the email is sent; the sweeper settles it in the end).
 */
export async function recordUnsent(
  deps: DeliverDeps,
  emailId: string,
  unsent: Unsent[],
  sent: { at: string; providerMessageId: string },
): Promise<void> {
  for (const { email: address, reason, unknown } of unsent) {
    deps.log?.error(
      unknown
        ? "SES's answer to the message of one recipient is unknown; it is not sent again"
        : 'SES did not take the message of one recipient; it is recorded failed',
      { email_id: emailId, recipient: address, reason },
    );
    if (unknown) continue;
    const at = deps.clock.now().toISOString();
    try {
      const settled = await deps.emails.settleRecipients(emailId, {
        addresses: [address],
        outcome: 'failed',
        at,
        reason,
        sent,
        event: { type: 'failed', at, recipients: [address], detail: reason },
      });
      const next =
        settled && !settled.changed && settled.status === 'queued' ? settledStatus(settled.tally) : undefined;
      if (next)
        await endEmail(deps, emailId, {
          ending: 'settled',
          status: next,
          at,
          ...(next === 'bounced'
            ? { reason: lostReason(settled?.tally as NonNullable<typeof settled>['tally']) }
            : {}),
          write: { sent },
        });
    } catch (error) {
      deps.log?.error('could not record the failed outcome of one recipient', {
        email_id: emailId,
        recipient: address,
        error,
      });
    }
  }
}
