import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EmailSummary } from '../../emails/email.js';
import type { ListEmailsQuery } from '../../emails/list-query.js';
import type { EmailPage } from '../../emails/ports.js';
import { matchesListed, primaryTerm } from '../../emails/search.js';
import { ApiError } from '../../shared/errors.js';
import { emailIdAt, FIRST_EMAIL_ID } from '../../shared/ids.js';
import { batchGetAll, newestFirstMerged, type SortedPartitions } from './client.js';
import { toSummary } from './email-items.js';
import { EmailKeys } from './email-keys.js';
import { INDEXES, keys, SEARCH_INDEX } from './table.js';

type Item = Record<string, unknown>;

/**
 * How many index entries one page of a combined search reads at most (the entries of its most
 * selective filter's index, each with its email's summary and status items): about 1,000 read units
 * eventually consistent, a fraction of a cent. A page that reaches it answers what it found, with
 * `has_more` true and `scanned_to`, the id it read up to, to continue from (`after=<scanned_to>`,
 * or `before=` when paging towards newer emails).
 */
export const SEARCH_SCAN_BOUND = 1_000;
/** Entries read at a time while narrowing: one BatchGetItem of their summaries and statuses. */
const CHUNK = 50;

/** A table's emails listed: `GET /v1/emails` with its filters (functions/emails/search.ts). */
export class EmailListing {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly keys: EmailKeys,
    /** SEARCH_SCAN_BOUND but in tests. */
    private readonly scanBound = SEARCH_SCAN_BOUND,
  ) {}

  async list(query: ListEmailsQuery): Promise<EmailPage> {
    const term = primaryTerm(query);
    if (term && this.keys.layout.searchOff)
      throw new ApiError(
        503,
        'service_unavailable',
        'Searching emails by recipient, sender domain or tag needs the search index, which this table gets at upgrade step 2 (docs/operations.md, "Upgrading"): list without those filters until then.',
      );
    const where = this.indexOf(query);
    // Filters the index does not answer: those of the other terms, and the status under a term.
    const narrows =
      term !== undefined &&
      (query.status !== undefined ||
        [query.recipient, query.tag, query.sender_domain].filter((v) => v !== undefined).length > 1);
    if (!narrows) {
      const { items, has_more } = await newestFirstMerged(this.db, where, query);
      return {
        data: [...(await this.summaries(items.map((item) => keys.idOf(String(item.pk))))).values()],
        has_more,
      };
    }
    return this.narrowed(where, query);
  }

  /** The index serving a query, within its time range (ids sort by creation time). */
  private indexOf(query: ListEmailsQuery): SortedPartitions {
    const term = primaryTerm(query);
    const index = term ? SEARCH_INDEX : query.status ? INDEXES.emailsByStatus : INDEXES.emailsByTime;
    return {
      TableName: this.tableName,
      IndexName: term || query.status ? index.name : this.keys.layout.timeIndex,
      partitionKey: index.partitionKey,
      sortKey: index.sortKey,
      partitions: term
        ? EmailKeys.searchPartitions(term.kind, term.value)
        : query.status
          ? this.keys.statusPartitions(query.status)
          : this.keys.timePartitions(),
      prefix: FIRST_EMAIL_ID,
      sortKeyOf: (id) => id,
      range: {
        // Created strictly after: from its next millisecond on; strictly before: below its own.
        ...(query.created_after !== undefined ? { low: emailIdAt(query.created_after + 1) } : {}),
        ...(query.created_before !== undefined ? { high: emailIdAt(query.created_before) } : {}),
      },
    };
  }

  /**
   * A page of the emails in the primary index that the other filters also take: the index read a
   * chunk at a time from the cursor outwards, each chunk's emails read and tested, until the page
   * is full or SEARCH_SCAN_BOUND entries were read.
   */
  private async narrowed(where: SortedPartitions, query: ListEmailsQuery): Promise<EmailPage> {
    const older = query.before === undefined;
    let cursor = query.after ?? query.before;
    let skip = cursor === undefined ? query.offset : 0;
    const matched: EmailSummary[] = [];
    let scanned = 0;
    let exhausted = false;
    while (matched.length <= query.limit && scanned < this.scanBound) {
      const limit = Math.min(CHUNK, this.scanBound - scanned);
      const side = cursor === undefined ? {} : older ? { after: cursor } : { before: cursor };
      const chunk = await newestFirstMerged(this.db, where, { limit, offset: 0, ...side });
      // Nearest the cursor first.
      const ids = (older ? chunk.items : [...chunk.items].reverse()).map((item) =>
        keys.idOf(String(item.pk)),
      );
      scanned += ids.length;
      const found = await this.summaries(
        ids,
        query.tag !== undefined && primaryTerm(query)?.kind !== 'tag' ? query.tag : undefined,
      );
      for (const id of ids) {
        const email = found.get(id);
        if (!email || !matchesListed(query, email)) continue;
        if (skip > 0) skip--;
        else matched.push(email);
      }
      cursor = ids.at(-1) ?? cursor;
      if (!chunk.has_more) {
        exhausted = true;
        break;
      }
    }
    const taken = matched.slice(0, query.limit);
    const full = matched.length > query.limit;
    return {
      data: older ? taken : taken.reverse(),
      has_more: full || !exhausted,
      ...(!full && !exhausted && cursor !== undefined ? { scanned_to: cursor } : {}),
    };
  }

  /**
   * The listed emails with these ids, by id (their summary and status items, 100 keys a call); with
   * `tag`, only those that carry it (its search item). An item the eventually consistent read did
   * not see yet (the email was just stored, or has just expired) is read again, strongly
   * consistent: rare, and the page stays exact.
   */
  private async summaries(ids: string[], tag?: string): Promise<Map<string, EmailSummary>> {
    if (ids.length === 0) return new Map();
    const wanted = ids.flatMap((id) => [
      { pk: keys.email(id), sk: keys.summary },
      { pk: keys.email(id), sk: keys.status },
    ]);
    const found = await batchGetAll(this.db, this.tableName, wanted);
    const missed = wanted.filter((key) => !found.some((item) => item.pk === key.pk && item.sk === key.sk));
    if (missed.length) found.push(...(await batchGetAll(this.db, this.tableName, missed, undefined, true)));
    const tagged = tag
      ? new Set(
          (
            await batchGetAll(
              this.db,
              this.tableName,
              ids.map((id) => ({ pk: keys.email(id), sk: `${EmailKeys.searchItemPrefix}tag#${tag}` })),
              'pk',
            )
          ).map((item) => String(item.pk)),
        )
      : undefined;
    const bySk = (sk: string) =>
      new Map(found.filter((item) => item.sk === sk).map((item) => [item.pk, item]));
    const summaries = bySk(keys.summary);
    const states = bySk(keys.status);
    const listed = new Map<string, EmailSummary>();
    for (const id of ids) {
      const pk = keys.email(id);
      const summary = summaries.get(pk) as Item | undefined;
      const state = states.get(pk) as Item | undefined;
      // Both gone: the email expired between the index read and this one.
      if (summary && state && (!tagged || tagged.has(pk))) listed.set(id, toSummary(id, state, summary));
    }
    return listed;
  }
}
