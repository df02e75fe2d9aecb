import * as z from 'zod/mini';
import type { AudienceReads } from '../contacts/reads.js';
import { BROADCAST_RECIPIENT_TYPES, type BroadcastRecipientType } from '../emails/broadcast-tally.js';
import { notFound } from '../shared/errors.js';
import { bothCursors, DEFAULT_LIMIT, MAX_LIMIT, queryInteger } from '../shared/list.js';

/**
 * A broadcast's recipients by type and its clicked links (issue 41), served from the items its
 * tally writes as events arrive (adapters/dynamodb/broadcast-tally.ts): a page reads only the
 * partitions of one type (one, with `email`), never a scan. Cursors are opaque (Resend's rows carry
 * an opaque `id` for pages): the row's position, base64url.
 */

export const BOUNCE_TYPES = ['permanent', 'transient', 'undetermined'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

/** One recipient of a type, as stored. */
export interface RecipientRow {
  /** Its position among the type's recipients (sorted by address). */
  position: string;
  email: string;
  email_id: string;
  /** When it first happened (ISO). */
  at: string;
  /** `opened`, `clicked`: how many times. */
  count?: number;
  bounce_type?: BounceType;
  /** `clicked`: each link, with this recipient's clicks on it. */
  links?: { url: string; clicks: number }[];
}

export interface ClickedLinkRow {
  position: string;
  url: string;
  clicks: number;
  unique_clicks: number;
}

export interface RowPage<T> {
  rows: T[];
  has_more: boolean;
}

/** Where a page starts: after a row (the page of rows after it), or before one. */
export interface RowPageQuery {
  limit: number;
  after?: string;
  before?: string;
}

/** What the routes read (adapters/dynamodb/broadcast-recipients.ts). */
export interface BroadcastRecipientReads {
  /** Whether the broadcast exists (one GetItem). */
  exists(broadcastId: string): Promise<boolean>;
  /** A page of the recipients of a type, by address; `email`: only that address's (one partition). */
  recipients(
    broadcastId: string,
    type: BroadcastRecipientType,
    page: RowPageQuery & { email?: string; bounce_type?: BounceType },
  ): Promise<RowPage<RecipientRow>>;
  /** A page of the clicked links (by the digest of their url: a stable order). */
  clickedLinks(broadcastId: string, page: RowPageQuery): Promise<RowPage<ClickedLinkRow>>;
}

export interface RecipientDeps {
  recipients: BroadcastRecipientReads;
  /** The contacts of the page's addresses, for each row's `contact_id` (one batched read a page). */
  audience?: Pick<AudienceReads, 'contactsByAddresses'>;
}

/** A cursor as the API gives it: the row's position, base64url. */
export const cursorOf = (position: string) => Buffer.from(position, 'utf8').toString('base64url');
const positionOf = (cursor: string | undefined) =>
  cursor === undefined ? undefined : Buffer.from(cursor, 'base64url').toString('utf8');

const cursor = (field: string) =>
  z.optional(
    z
      .string()
      .check(
        z.refine(
          (s) => /^[A-Za-z0-9_-]{1,1400}$/.test(s),
          `${field} must be the id (an opaque cursor) of a listed row`,
        ),
      ),
  );

const pageFields = {
  limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
  after: cursor('after'),
  before: cursor('before'),
};

const oneCursor = z.superRefine((query: { after?: string; before?: string }, ctx) => {
  if (query.after !== undefined && query.before !== undefined) ctx.issues.push(bothCursors(query.before));
});

/** `GET /v1/broadcasts/{id}/recipients`'s query string. */
export const recipientsQuerySchema = z
  .strictObject({
    type: z.enum(BROADCAST_RECIPIENT_TYPES, `type must be one of ${BROADCAST_RECIPIENT_TYPES.join(', ')}`),
    email: z.optional(z.string().check(z.minLength(1), z.maxLength(320))),
    bounce_type: z.optional(z.enum(BOUNCE_TYPES, `bounce_type must be one of ${BOUNCE_TYPES.join(', ')}`)),
    ...pageFields,
  })
  .check(
    oneCursor,
    z.superRefine((query, ctx) => {
      if (query.bounce_type !== undefined && query.type !== 'bounced')
        ctx.issues.push({
          code: 'custom',
          path: ['bounce_type'],
          message: 'bounce_type filters the bounced recipients only (type=bounced)',
          input: query.bounce_type,
        });
    }),
  );
export type RecipientsQuery = z.infer<typeof recipientsQuerySchema>;

/** `GET /v1/broadcasts/{id}/clicked-links`'s query string. */
export const clickedLinksQuerySchema = z.strictObject(pageFields).check(oneCursor);
export type ClickedLinksQuery = z.infer<typeof clickedLinksQuerySchema>;

async function mustExist(deps: RecipientDeps, broadcastId: string) {
  if (!(await deps.recipients.exists(broadcastId))) throw notFound(`no broadcast ${broadcastId}`);
}

/** A page of a broadcast's recipients of one type, in Resend's shape (ours beside: `email_id`, `created_at`). */
export async function listRecipients(deps: RecipientDeps, broadcastId: string, query: RecipientsQuery) {
  await mustExist(deps, broadcastId);
  const page = await deps.recipients.recipients(broadcastId, query.type, {
    limit: query.limit,
    ...(query.email !== undefined ? { email: query.email.trim().toLowerCase() } : {}),
    ...(query.bounce_type ? { bounce_type: query.bounce_type } : {}),
    ...pagePositions(query),
  });
  const contacts = deps.audience
    ? await deps.audience.contactsByAddresses([...new Set(page.rows.map((row) => row.email))])
    : new Map();
  return {
    object: 'list' as const,
    has_more: page.has_more,
    data: page.rows.map((row) => ({
      id: cursorOf(row.position),
      contact_id: contacts.get(row.email)?.id ?? null,
      email: row.email,
      ...(query.type === 'opened' || query.type === 'clicked' ? { count: row.count ?? 1 } : {}),
      ...(query.type === 'bounced' ? { bounce_type: row.bounce_type ?? 'undetermined' } : {}),
      ...(query.type === 'clicked' ? { clicked_links: row.links ?? [] } : {}),
      email_id: row.email_id,
      created_at: row.at,
    })),
  };
}

/** A page of a broadcast's clicked links, in Resend's shape. */
export async function listClickedLinks(deps: RecipientDeps, broadcastId: string, query: ClickedLinksQuery) {
  await mustExist(deps, broadcastId);
  const page = await deps.recipients.clickedLinks(broadcastId, {
    limit: query.limit,
    ...pagePositions(query),
  });
  return {
    object: 'list' as const,
    has_more: page.has_more,
    data: page.rows.map((row) => ({
      id: cursorOf(row.position),
      url: row.url,
      clicks: row.clicks,
      unique_clicks: row.unique_clicks,
    })),
  };
}

const pagePositions = (query: { after?: string; before?: string }) => {
  const after = positionOf(query.after);
  const before = positionOf(query.before);
  return { ...(after !== undefined ? { after } : {}), ...(before !== undefined ? { before } : {}) };
};
