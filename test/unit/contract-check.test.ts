import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractViolations, type RecordedAnswer } from '../support/contract.js';

/** The contract check itself: what it lets through and what it stops. */
const check = async (...answers: Partial<RecordedAnswer>[]) => {
  const file = join(tmpdir(), `contract-check-${process.pid}-${Math.random()}.jsonl`);
  const lines = answers.map((a) =>
    JSON.stringify({
      method: 'POST',
      path: '/v1/emails',
      routeKey: 'POST /v1/emails',
      status: 200,
      contentType: 'application/json; charset=utf-8',
      ...a,
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return (await contractViolations(file)).violations;
};

const sent = {
  id: 'em_01m80mv90eew9ryfvqd1ksnhes',
  status: 'queued',
  created_at: '2026-11-22T03:29:55.214Z',
};
const error = (statusCode: number, name: string) => ({ statusCode, name, message: 'm' });

describe('the contract check', () => {
  it('lets through documented answers: the success and each documented error in the one shape', async () => {
    expect(
      await check(
        { body: JSON.stringify(sent) },
        { status: 400, body: JSON.stringify(error(400, 'validation_error')) },
        { status: 429, body: JSON.stringify(error(429, 'rate_limit_exceeded')) },
        {
          routeKey: '$default',
          path: '/v1/nothing',
          status: 404,
          body: JSON.stringify(error(404, 'not_found')),
        },
      ),
    ).toEqual([]);
  });

  it('stops a field the document does not have, a missing one, a wrong type, an undocumented status', async () => {
    const [extra] = await check({ body: JSON.stringify({ ...sent, surprise: 1 }) });
    expect(extra).toMatch(/must NOT have additional properties/);
    const [missing] = await check({ body: JSON.stringify({ id: sent.id, status: 'queued' }) });
    expect(missing).toMatch(/must have required property 'created_at'/);
    const [wrongType] = await check({ body: JSON.stringify({ ...sent, status: 'sent' }) });
    expect(wrongType).toMatch(/must be equal to one of the allowed values/);
    const [status] = await check({ status: 418, body: JSON.stringify(error(418, 'teapot')) });
    expect(status).toMatch(/status 418 is not documented for POST \/v1\/emails/);
    const [errorShape] = await check({ status: 400, body: JSON.stringify({ error: 'bad' }) });
    expect(errorShape).toMatch(/must have required property 'statusCode'/);
    const [notJson] = await check({ body: 'hello' });
    expect(notJson).toMatch(/not JSON/);
    const [media] = await check({ contentType: 'text/plain', body: 'hello' });
    expect(media).toMatch(/text\/plain is not documented/);
    const [fallback] = await check({ routeKey: '$default', status: 200, body: '{}' });
    expect(fallback).toMatch(/not an error/);
  });
});
