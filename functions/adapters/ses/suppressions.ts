import { DeleteSuppressedDestinationCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { ProviderSuppressions } from '../../suppressions/ports.js';

/**
 * SES's account-level suppression list. SES adds hard-bounced and complaining addresses to it by
 * itself and then refuses to deliver to them (a Bounce of subtype OnAccountSuppressionList), so
 * an address taken off our list must come off SES's too, or the next send bounces anyway.
 */
export class SesSuppressions implements ProviderSuppressions {
  constructor(private readonly ses: SESv2Client) {}

  async remove(email: string): Promise<void> {
    try {
      await this.ses.send(new DeleteSuppressedDestinationCommand({ EmailAddress: email }));
    } catch (error) {
      // Not on SES's list: nothing to do.
      if (error instanceof Error && error.name === 'NotFoundException') return;
      throw error;
    }
  }
}
