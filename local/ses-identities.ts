import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { domainOf } from '../functions/shared/address.js';

/**
 * SES v2's identity API, which the SES emulator lacks, for `npm start`: CreateEmailIdentity,
 * GetEmailIdentity, DeleteEmailIdentity and PutEmailIdentityMailFromAttributes, with the request
 * and response shapes of SES (so the same SDK calls and the same adapter work in both places).
 *
 * There is no DNS to look at, so verification is simulated: a new domain is PENDING for
 * `verifyAfterMs`, then SUCCESS, as if its records had been published. A domain under the reserved
 * `.invalid` top-level domain (RFC 2606) never verifies: PENDING for `failAfterMs`, then FAILED,
 * as SES does after 72 hours without the records.
 */
export interface LocalIdentityOptions {
  /** @default 3000 */
  verifyAfterMs?: number;
  /** @default 10000 */
  failAfterMs?: number;
  /** JSON file the identities are kept in across restarts; none: in memory. */
  file?: string;
  region?: string;
}

interface StoredIdentity {
  createdAtMs: number;
  tokens: string[];
  tags: { Key: string; Value: string }[];
  mailFrom?: { domain: string; behavior: string; setAtMs: number };
}

export interface SesReply {
  status: number;
  body: unknown;
  errorType?: string;
}

const IDENTITIES = /^\/v2\/email\/identities(?:\/([^/?]+))?(\/mail-from)?\/?(?:\?.*)?$/;

export const isReservedForFailure = (domain: string) => domain === 'invalid' || domain.endsWith('.invalid');

export class LocalIdentities {
  private readonly identities = new Map<string, StoredIdentity>();
  private readonly verifyAfterMs: number;
  private readonly failAfterMs: number;
  private readonly region: string;

  constructor(private readonly options: LocalIdentityOptions = {}) {
    this.verifyAfterMs = options.verifyAfterMs ?? 3000;
    this.failAfterMs = options.failAfterMs ?? 10_000;
    this.region = (options.region ?? 'us-east-1').toUpperCase();
    if (options.file && existsSync(options.file)) {
      const saved = JSON.parse(readFileSync(options.file, 'utf8')) as Record<string, StoredIdentity>;
      for (const [name, identity] of Object.entries(saved)) this.identities.set(name, identity);
    }
  }

  private save() {
    if (!this.options.file) return;
    mkdirSync(dirname(this.options.file), { recursive: true });
    writeFileSync(this.options.file, JSON.stringify(Object.fromEntries(this.identities), null, 2));
  }

  /** SES's status for something that started being checked at `sinceMs`. */
  private statusOf(domain: string, sinceMs: number): 'PENDING' | 'SUCCESS' | 'FAILED' {
    const elapsed = Date.now() - sinceMs;
    if (isReservedForFailure(domain)) return elapsed < this.failAfterMs ? 'PENDING' : 'FAILED';
    return elapsed < this.verifyAfterMs ? 'PENDING' : 'SUCCESS';
  }

  /** Whether SES would send from this address now (SendEmail checks its domain). */
  canSendFrom(address: string): boolean {
    const domain = domainOf((/<([^<>]+)>\s*$/.exec(address)?.[1] ?? address).trim());
    const identity = this.identities.get(domain);
    return identity !== undefined && this.statusOf(domain, identity.createdAtMs) === 'SUCCESS';
  }

  /**
   * Whether a domain is verified: it or a domain above it is a verified identity (SES's identity
   * guide: a verified domain covers its subdomains). What SES asks of a custom redirect domain.
   */
  verifiedDomain(domain: string): boolean {
    const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
    return labels.some((_, i) => {
      const name = labels.slice(i).join('.');
      const identity = this.identities.get(name);
      return identity !== undefined && this.statusOf(name, identity.createdAtMs) === 'SUCCESS';
    });
  }

  /** Whether an address is at a verified identity, or the mailbox simulator's: a sandbox may send to it. */
  verifiedRecipient(address: string): boolean {
    const domain = domainOf((/<([^<>]+)>\s*$/.exec(address)?.[1] ?? address).trim());
    return domain === 'simulator.amazonses.com' || this.canSendFrom(address);
  }

  notVerified(address: string): SesReply {
    return {
      status: 400,
      errorType: 'MessageRejected',
      body: {
        message: `Email address is not verified. The following identities failed the check in region ${this.region}: ${address}`,
      },
    };
  }

  /** Answers an identity request, or returns undefined when the request is not one. */
  handle(method: string, url: string, body: Buffer): SesReply | undefined {
    const match = IDENTITIES.exec(url);
    if (!match) return undefined;
    const name = match[1] ? decodeURIComponent(match[1]).toLowerCase() : undefined;
    const mailFrom = Boolean(match[2]);
    const request = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    if (!name && method === 'POST') return this.create(request);
    if (!name) return undefined;
    const identity = this.identities.get(name);
    if (!identity) {
      return {
        status: 404,
        errorType: 'NotFoundException',
        body: { message: `Email identity ${name} does not exist.` },
      };
    }
    if (mailFrom && method === 'PUT') {
      identity.mailFrom = {
        domain: String(request.MailFromDomain ?? ''),
        behavior: String(request.BehaviorOnMxFailure ?? 'USE_DEFAULT_VALUE'),
        setAtMs: Date.now(),
      };
      this.save();
      return { status: 200, body: {} };
    }
    if (method === 'GET') return { status: 200, body: this.describe(name, identity) };
    if (method === 'DELETE') {
      this.identities.delete(name);
      this.save();
      return { status: 200, body: {} };
    }
    return undefined;
  }

  private create(request: Record<string, unknown>): SesReply {
    const name = String(request.EmailIdentity ?? '').toLowerCase();
    if (!name.includes('.') || name.includes('@')) {
      return {
        status: 400,
        errorType: 'BadRequestException',
        body: { message: 'The local SES stand-in only supports domain identities.' },
      };
    }
    if (this.identities.has(name)) {
      return {
        status: 400,
        errorType: 'AlreadyExistsException',
        body: { message: `Email identity ${name} already exist.` },
      };
    }
    const identity: StoredIdentity = {
      createdAtMs: Date.now(),
      // Easy DKIM tokens: 32 lower-case base32 characters each, like SES's.
      tokens: Array.from({ length: 3 }, () => toToken(randomBytes(20))),
      tags: (request.Tags as StoredIdentity['tags'] | undefined) ?? [],
    };
    this.identities.set(name, identity);
    this.save();
    const { DkimAttributes, IdentityType, VerifiedForSendingStatus } = this.describe(name, identity);
    return {
      status: 200,
      body: {
        IdentityType,
        VerifiedForSendingStatus,
        DkimAttributes: { ...DkimAttributes, Status: 'NOT_STARTED' },
      },
    };
  }

  private describe(name: string, identity: StoredIdentity) {
    const status = this.statusOf(name, identity.createdAtMs);
    return {
      IdentityType: 'DOMAIN',
      FeedbackForwardingStatus: true,
      VerifiedForSendingStatus: status === 'SUCCESS',
      VerificationStatus: status,
      DkimAttributes: {
        SigningEnabled: true,
        Status: status,
        Tokens: identity.tokens,
        SigningAttributesOrigin: 'AWS_SES',
        NextSigningKeyLength: 'RSA_2048_BIT',
        CurrentSigningKeyLength: 'RSA_2048_BIT',
      },
      MailFromAttributes: identity.mailFrom
        ? {
            MailFromDomain: identity.mailFrom.domain,
            MailFromDomainStatus: this.statusOf(name, identity.mailFrom.setAtMs),
            BehaviorOnMxFailure: identity.mailFrom.behavior,
          }
        : { MailFromDomain: '', MailFromDomainStatus: 'PENDING', BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' },
      Policies: {},
      Tags: identity.tags,
    };
  }
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const toToken = (bytes: Buffer) => {
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  return Array.from({ length: 32 }, (_, i) => BASE32[Number.parseInt(bits.slice(i * 5, i * 5 + 5), 2)]).join(
    '',
  );
};
