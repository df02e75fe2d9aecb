import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { changeUnits } from '../../bin/bench/meter.js';
import { receipt } from '../../bin/bench/receipt.js';
import { bodiesFrom, bodiesPlace, groupItems } from '../../functions/adapters/dynamodb/request-log-items.js';
import {
  bodyForLog,
  logIdOf,
  type RequestLogEntry,
  requestLogLine,
} from '../../functions/request-logs/model.js';
import { parseRequestLogLine } from '../../functions/request-logs/reads.js';
import { decodeZ85, encodeZ85 } from '../../functions/request-logs/z85.js';

/**
 * Write units per logged request, as DynamoDB bills them (the bench's meter: each item by its size,
 * rounded up to 1 KB, and each index entry): a receipt's send, logged by groups of the sizes a
 * writer batch has, costs at most 1.5 units on average from three logs a batch, and an error adds
 * its status index entry only.
 */
const at = Date.parse('2026-07-01T00:00:00Z');
const send = (i: number, status = 200): RequestLogEntry => ({
  id: logIdOf(`request-${i}`, at + i),
  created_at: new Date(at + i).toISOString(),
  method: 'POST',
  endpoint: '/emails',
  response_status: status,
  user_agent: 'resend-node:6.38.0',
  api_key_id: 'key_01jz9d3m2q5y7c8v0b1n4x6t8w',
  duration_ms: 35.27,
  request_body: bodyForLog(receipt(i)),
  response_body: JSON.stringify({ id: `em_01jz9d3m2q5y7c8v0b1n4x6t${String(i).padStart(2, '0')}` }),
});
const unitsPerLog = (entries: RequestLogEntry[]) =>
  groupItems(entries, 30).reduce((sum, item) => sum + changeUnits(undefined, item), 0) / entries.length;

describe('request-log items', () => {
  it('a receipt send costs at most 1.5 write units a log from three logs a batch, 1 from six', () => {
    for (let n = 3; n <= 12; n++)
      expect(unitsPerLog(Array.from({ length: n }, (_, i) => send(i + n * 100)))).toBeLessThanOrEqual(1.5);
    expect(unitsPerLog(Array.from({ length: 6 }, (_, i) => send(i)))).toBe(1);
    expect(unitsPerLog([send(1)])).toBe(2);
  });

  it('an error log adds one index entry (the status index), a 2xx none', () => {
    const small = (status: number): RequestLogEntry => ({ ...send(7, status), request_body: null });
    expect(unitsPerLog([small(200)])).toBe(1);
    expect(unitsPerLog([small(422)])).toBe(2);
  });

  it("reads each log's bodies back from its group's holders, and none from another group's slice", () => {
    const entries = Array.from({ length: 12 }, (_, i) => send(i));
    const items = groupItems(entries, 30);
    const bySk = new Map(items.map((item) => [String(item.sk), item]));
    items.forEach((item, i) => {
      const place = bodiesPlace(item);
      const holders = place.holders.map((id) => bySk.get(`LOG#${id}`));
      expect(bodiesFrom(place, holders)).toEqual([entries[i]?.request_body, entries[i]?.response_body]);
    });
    const other = groupItems([send(50), send(51)], 30)[0];
    const place = bodiesPlace(items[5] as Record<string, unknown>);
    const mixed = place.holders.map((id, i) => (i === 0 ? other : bySk.get(`LOG#${id}`)));
    expect(bodiesFrom(place, mixed)).toEqual([null, null]);
  });

  it('a line carries a long body compressed, and the writer reads it back as the middleware built it', () => {
    const entry = send(3);
    const line = requestLogLine(entry);
    expect(line).toContain('"bodies":"');
    expect(Buffer.byteLength(line)).toBeLessThan(2200);
    expect(line).not.toContain('created_at');
    expect(parseRequestLogLine(line)).toEqual(entry);
    const short = { ...entry, request_body: '{"a":1}' };
    expect(requestLogLine(short)).toContain('"request_body":"{\\"a\\":1}"');
  });

  it('Z85 carries any bytes in a JSON string (no quote, no backslash) at 5 characters for 4', () => {
    for (const length of [0, 1, 2, 3, 4, 5, 1000, 1001]) {
      const bytes = randomBytes(length);
      const text = encodeZ85(bytes);
      expect(text).not.toMatch(/["\\]/);
      expect(text.length).toBe(1 + Math.ceil(length / 4) * 5);
      expect(decodeZ85(text).equals(bytes)).toBe(true);
    }
    expect(() => decodeZ85('0abc')).toThrow(/Z85/);
    expect(() => decodeZ85('0#####')).toThrow(/Z85/);
  });
});
