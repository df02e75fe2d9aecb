import { createHash } from 'node:crypto';

/**
 * Domains' own SES configuration sets are named this plus the domain's id (30 characters; SES
 * allows 64, so this is at most 34): the stack's name, cut to 24 characters for a reader, and a
 * digest of the whole name (8 hex digits of its SHA-256), so two stacks in one account whose names
 * share their first characters never share a name or a grant.
 */
export const domainConfigurationSetPrefix = (stackName: string) =>
  `${stackName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 24)}-${createHash('sha256').update(stackName).digest('hex').slice(0, 8)}-`;

/**
 * The prefix of versions before the digest: the name cut to 33 characters, which two stacks whose
 * names share those share. Granted only while `legacyDomainSets` says sets so named may exist.
 */
export const legacyDomainConfigurationSetPrefix = (stackName: string) =>
  `${stackName.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 33)}-`;
