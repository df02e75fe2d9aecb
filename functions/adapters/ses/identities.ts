import {
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  type DkimAttributes,
  GetEmailIdentityCommand,
  type MailFromAttributes,
  PutEmailIdentityMailFromAttributesCommand,
  type SESv2Client,
  type Tag,
} from '@aws-sdk/client-sesv2';
import type { DnsRecord, DomainIdentity, DomainStatus } from '../../domains/model.js';
import { IdentityError, type SendingIdentities } from '../../domains/ports.js';
import { newSesClient } from '../aws-clients.js';

/** The tag that marks an SES identity as created by this service (value: the table name). */
export const OWNER_TAG = 'email-service';

/**
 * SES's verification statuses in the API's terms. NOT_STARTED (the moment after creation) and
 * PENDING are both `pending`: DNS has not been seen yet.
 */
export function toDomainStatus(status: string | undefined): DomainStatus {
  switch (status) {
    case 'SUCCESS':
      return 'verified';
    case 'FAILED':
      return 'failed';
    case 'TEMPORARY_FAILURE':
      return 'temporary_failure';
    default:
      return 'pending';
  }
}

/**
 * The records SES checks, each with the status SES reports for it: three Easy DKIM CNAMEs, and the
 * MAIL FROM subdomain's MX and SPF TXT (the suggested DMARC record, which SES does not check, is
 * shown beside them: see toDomainBody).
 */
export function identityRecords(
  domain: string,
  region: string,
  dkim: DkimAttributes | undefined,
  mailFrom: MailFromAttributes | undefined,
  sub: string,
): DnsRecord[] {
  const dkimStatus = toDomainStatus(dkim?.Status);
  const mailFromStatus =
    mailFrom?.MailFromDomain === sub ? toDomainStatus(mailFrom.MailFromDomainStatus) : 'pending';
  return [
    ...(dkim?.Tokens ?? []).map(
      (token): DnsRecord => ({
        record: 'DKIM',
        type: 'CNAME',
        name: `${token}._domainkey.${domain}`,
        value: `${token}.dkim.amazonses.com`,
        ttl: 'Auto',
        status: dkimStatus,
      }),
    ),
    {
      record: 'SPF',
      type: 'MX',
      name: sub,
      value: `feedback-smtp.${region}.amazonses.com`,
      priority: 10,
      ttl: 'Auto',
      status: mailFromStatus,
    },
    {
      record: 'SPF',
      type: 'TXT',
      name: sub,
      value: 'v=spf1 include:amazonses.com ~all',
      ttl: 'Auto',
      status: mailFromStatus,
    },
  ];
}

export function toIdentityError(error: unknown): IdentityError {
  const name = error instanceof Error ? error.name : 'UnknownError';
  const message = error instanceof Error ? error.message : String(error);
  const reason =
    name === 'AlreadyExistsException'
      ? 'exists'
      : name === 'LimitExceededException'
        ? 'limit'
        : name === 'TooManyRequestsException'
          ? 'throttled'
          : name === 'BadRequestException'
            ? 'invalid'
            : 'unavailable';
  return new IdentityError(`${name}: ${message}`, reason);
}

const isNotFound = (error: unknown) => error instanceof Error && error.name === 'NotFoundException';

/** SES v2 domain identities with Easy DKIM (2048-bit) and a custom MAIL FROM subdomain. */
export class SesIdentities implements SendingIdentities {
  private readonly tags: Tag[];

  constructor(
    private readonly client: SESv2Client,
    private readonly options: { region: string; owner: string },
  ) {
    this.tags = [{ Key: OWNER_TAG, Value: options.owner }];
  }

  /** One SES call; its failure as an IdentityError. */
  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw toIdentityError(error);
    }
  }

  async create(domain: string, mailFromDomain: string): Promise<DomainIdentity> {
    let dkim: DkimAttributes | undefined;
    let mailFrom: MailFromAttributes | undefined;
    let sendable: boolean | undefined;
    try {
      const created = await this.client.send(
        new CreateEmailIdentityCommand({
          EmailIdentity: domain,
          Tags: this.tags,
          DkimSigningAttributes: { NextSigningKeyLength: 'RSA_2048_BIT' },
        }),
      );
      dkim = created.DkimAttributes;
      sendable = created.VerifiedForSendingStatus;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'AlreadyExistsException')) throw toIdentityError(error);
      // Ours from an earlier attempt whose store failed: adopt it. Anyone else's: refuse.
      const existing = await this.call(() =>
        this.client.send(new GetEmailIdentityCommand({ EmailIdentity: domain })),
      );
      const owned = existing.Tags?.some((t) => t.Key === OWNER_TAG && t.Value === this.options.owner);
      if (!owned) throw new IdentityError(`${domain} already exists in SES`, 'exists');
      dkim = existing.DkimAttributes;
      mailFrom = existing.MailFromAttributes;
      sendable = existing.VerifiedForSendingStatus;
    }
    if (mailFrom?.MailFromDomain !== mailFromDomain) {
      // If MX is missing SES falls back to its own MAIL FROM instead of refusing to send.
      await this.call(() =>
        this.client.send(
          new PutEmailIdentityMailFromAttributesCommand({
            EmailIdentity: domain,
            MailFromDomain: mailFromDomain,
            BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
          }),
        ),
      );
      mailFrom = {
        MailFromDomain: mailFromDomain,
        MailFromDomainStatus: 'PENDING',
        BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
      };
    }
    return {
      status: toDomainStatus(dkim?.Status),
      sendable: sendable === true,
      records: identityRecords(domain, this.options.region, dkim, mailFrom, mailFromDomain),
    };
  }

  async get(domain: string, mailFromDomain: string): Promise<DomainIdentity | null> {
    try {
      const identity = await this.client.send(new GetEmailIdentityCommand({ EmailIdentity: domain }));
      return {
        // For a domain with Easy DKIM, the identity is verified when its DKIM records are.
        status: toDomainStatus(identity.VerificationStatus ?? identity.DkimAttributes?.Status),
        sendable: identity.VerifiedForSendingStatus === true,
        records: identityRecords(
          domain,
          this.options.region,
          identity.DkimAttributes,
          identity.MailFromAttributes,
          mailFromDomain,
        ),
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw toIdentityError(error);
    }
  }

  async delete(domain: string): Promise<void> {
    try {
      await this.client.send(new DeleteEmailIdentityCommand({ EmailIdentity: domain }));
    } catch (error) {
      if (!isNotFound(error)) throw toIdentityError(error);
    }
  }
}

/** The identities adapter a function uses: region from Lambda's environment, owner tag = the table name. */
export const createSesIdentities = (owner: string, region = process.env.AWS_REGION ?? 'us-east-1') =>
  new SesIdentities(newSesClient(), { region, owner });
