/**
 * The broadcast cost model (bin/simulate/broadcast.ts) held to what the code writes: a page of
 * broadcast emails, rendered for each contact with the foundation's merge tags, created by
 * createMany with mayExist as the fan-out creates them, in the emulated table. Every item written
 * is sized as DynamoDB bills it (1 write unit per KB, an index entry a unit more), and the lane's
 * job (toQueueMessage) weighed: the model's terms must be what the code writes, or more.
 */
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BROADCAST_FIGURES, MILLION, writeUnitsPerBroadcastEmail } from '../../bin/simulate/broadcast.js';
import { DynamoEmailRepository } from '../../functions/adapters/dynamodb/email-repository.js';
import { broadcastEmailId } from '../../functions/broadcasts/email-ids.js';
import { renderForContact } from '../../functions/broadcasts/merge-tags.js';
import type { EmailContent } from '../../functions/emails/content.js';
import { toQueueMessage } from '../../functions/emails/send-job.js';
import { newUuid } from '../../functions/shared/ids.js';
import { startTestTable, type TestTable } from '../support/table.js';

let table: TestTable;
beforeAll(async () => {
  table = await startTestTable();
});
afterAll(() => table?.stop());

/** An item's size as DynamoDB counts it: each attribute's name and value, in UTF-8 bytes. */
function itemBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(value).replace(/^-|\./g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((n, v) => n + itemBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n, v) => n + 1 + itemBytes(v), 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (n, [name, v]) => n + Buffer.byteLength(name) + 1 + itemBytes(v),
      0,
    )
  );
}
const attributesBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((n, [name, v]) => n + Buffer.byteLength(name) + itemBytes(v), 0);
const INDEX_KEYS = ['gsi1pk', 'gsi2pk', 'gsi3pk', 'gsi4pk'];

/** A newsletter of about 12 KB: words from a vocabulary in a fixed pseudo-random order, inline styles, merge tags. */
function newsletter(): { html: string; text: string } {
  const words =
    'broadcast contact spring offer garden weekly update product team launch price order read more'.split(
      ' ',
    );
  let seed = 7;
  const word = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return words[seed % words.length] as string;
  };
  const paragraph = () => Array.from({ length: 40 }, word).join(' ');
  const blocks = Array.from(
    { length: 14 },
    (_, i) =>
      `<tr><td style="padding:16px 24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:22px;color:#333333"><h2 style="margin:0 0 8px;font-size:18px">Section ${i + 1}</h2><p style="margin:0">${paragraph()}</p><a href="https://acme.test/p/${i}?utm_source=news" style="color:#0a66c2">Read more</a></td></tr>`,
  );
  const html = `<!doctype html><html><body style="margin:0;background:#f4f4f4"><table role="presentation" width="100%">${'<tr><td>Hello {{{contact.first_name|there}}},</td></tr>'}${blocks.join('')}<tr><td><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></td></tr></table></body></html>`;
  const text = `Hello {{{contact.first_name|there}}},\n\n${Array.from({ length: 6 }, paragraph).join('\n\n')}\n\nUnsubscribe: {{{RESEND_UNSUBSCRIBE_URL}}}`;
  return { html, text };
}

it("counts createMany's write units for a page of broadcast emails: the model's terms, or more", async () => {
  const written: Record<string, unknown>[] = [];
  const db = Object.assign(Object.create(table.db), {
    send: (command: unknown) => {
      if (command instanceof BatchWriteCommand)
        for (const requests of Object.values(command.input.RequestItems ?? {}))
          for (const request of requests) if (request.PutRequest?.Item) written.push(request.PutRequest.Item);
      if (command instanceof PutCommand && command.input.Item) written.push(command.input.Item);
      return (table.db.send as (c: unknown) => Promise<unknown>)(command);
    },
  }) as typeof table.db;
  const emails = new DynamoEmailRepository(db, table.tableName);
  const broadcastId = newUuid();
  const topicId = newUuid();
  const parts = { subject: 'Spring news for {{{contact.first_name|you}}}', ...newsletter() };
  const page = Array.from({ length: 20 }, (_, i) => {
    const contact = {
      email: `reader-${i}@example.com`,
      first_name: `Reader${i}`,
      last_name: null,
      props: {},
    };
    const id = broadcastEmailId(broadcastId, newUuid(), Date.parse('2026-11-22T03:00:00Z'));
    const rendered = renderForContact(
      parts,
      contact,
      [],
      `https://mail.acme.test/unsubscribe/${'t'.repeat(120)}`,
    );
    const content: EmailContent = {
      from: 'Acme News <news@acme.test>',
      to: [contact.email],
      cc: [],
      bcc: [],
      reply_to: [],
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      tags: [],
      headers: {},
      topic_id: topicId,
      broadcast_id: broadcastId,
    };
    return { id, created_at: '2026-11-22T03:00:00.000Z', content };
  });
  const bodyBytes =
    Buffer.byteLength(page[0]?.content.html ?? '') + Buffer.byteLength(page[0]?.content.text ?? '');
  expect(bodyBytes).toBeGreaterThan(10_000);
  expect(bodyBytes).toBeLessThanOrEqual(BROADCAST_FIGURES.bodyBytes);

  expect((await emails.createMany(page, { mayExist: true })).existing).toEqual([]);
  const bySk = (sk: string) => written.filter((item) => item.sk === sk);
  const units = (items: Record<string, unknown>[]) =>
    items.reduce((n, item) => n + Math.ceil(attributesBytes(item) / 1024), 0) / page.length;
  const entries = (items: Record<string, unknown>[]) =>
    items.reduce((n, item) => n + INDEX_KEYS.filter((key) => key in item).length, 0) / page.length;
  // Each email: a summary, a body and a status item, nothing else (one recipient, no tags).
  expect(written).toHaveLength(3 * page.length);
  const model = Object.fromEntries(writeUnitsPerBroadcastEmail(MILLION).terms);
  const term = (prefix: string) =>
    Object.entries(model).find(([name]) => name.startsWith(prefix))?.[1] as number;
  expect(units(bySk('SUMMARY'))).toBe(term('createMany: summary'));
  expect(units(bySk('BODY'))).toBeLessThanOrEqual(term('createMany: body'));
  expect(entries([...bySk('SUMMARY'), ...bySk('BODY')])).toBe(term('createMany: search'));
  expect(units(bySk('STATUS')) + entries(bySk('STATUS'))).toBe(term('createMany: status'));
  // The body item's attributes besides its deflated bodies: what the model adds to them.
  const body = bySk('BODY')[0] as Record<string, unknown>;
  const { z, html, text, ...rest } = body;
  expect(z ?? html ?? text).toBeDefined();
  expect(attributesBytes(rest) + 1).toBeLessThanOrEqual(BROADCAST_FIGURES.bodyItemOverheadBytes);

  // The lane's job carries the content: under the model's bytes for a body of this size.
  const job = toQueueMessage({ id: page[0]?.id as string, content: page[0]?.content as EmailContent });
  expect(Buffer.byteLength(job)).toBeLessThanOrEqual(bodyBytes + BROADCAST_FIGURES.jobOverheadBytes);
});
