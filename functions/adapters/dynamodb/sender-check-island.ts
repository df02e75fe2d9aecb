import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { verifiedSenderDomains } from '../../domains/sending.js';
import type { Clock } from '../../shared/ports.js';
import { DynamoDomainRepository } from './domain-repository.js';

/**
 * The send path's check of a sender's domain (domains/sending.ts) with the domains' repository, as
 * one module create-broadcast loads on first use (most creates are drafts, which send nothing):
 * deployed, an island bundled on its own (lib/bundling.ts ISLANDS), so the domains' code stays out
 * of its cold start and out of the chunks its siblings load at init.
 */
export const createSenderCheck = (db: DynamoDBDocumentClient, tableName: string, clock: Clock) =>
  verifiedSenderDomains(new DynamoDomainRepository(db, tableName), clock);
