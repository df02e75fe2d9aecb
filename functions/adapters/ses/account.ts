import { GetAccountCommand, type SESv2Client } from '@aws-sdk/client-sesv2';
import type { SendQuota } from '../../shared/pacing.js';
import type { SendQuotaReader } from '../../shared/ports.js';

/** The account's sending limits from SES v2's GetAccount (`SendQuota`, `SendingEnabled`). */
export class SesSendQuota implements SendQuotaReader {
  constructor(private readonly ses: SESv2Client) {}

  async read(): Promise<SendQuota> {
    const account = await this.ses.send(new GetAccountCommand({}));
    return {
      maxSendRate: account.SendQuota?.MaxSendRate ?? 1,
      max24HourSend: account.SendQuota?.Max24HourSend ?? 200,
      sentLast24Hours: account.SendQuota?.SentLast24Hours ?? 0,
      sendingEnabled: account.SendingEnabled ?? true,
    };
  }
}
