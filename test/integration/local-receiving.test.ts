import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { asyncInvoker, type ResourceRecord, runCustomResource } from '../../local/receiving.js';

/**
 * How the local service runs receiving's AWS-side machinery: the custom resource as CloudFormation
 * runs it (Create, then Update with its physical id; a FAILED answer stops the start), and the
 * Lambda action's asynchronous invocation (two retries, then Lambda's record to the failure
 * destination).
 */

/** A custom resource handler that answers at the ResponseURL as cfn-response does (a PUT of JSON). */
const answering =
  (status: 'SUCCESS' | 'FAILED', seen: CloudFormationCustomResourceEvent[]) =>
  async (event: CloudFormationCustomResourceEvent) => {
    seen.push(event);
    const response = await fetch(event.ResponseURL, {
      method: 'PUT',
      body: JSON.stringify({
        Status: status,
        Reason: status === 'FAILED' ? 'no rule set could be made' : undefined,
        PhysicalResourceId: 'receiving-email-service-receiving',
        StackId: event.StackId,
        RequestId: event.RequestId,
        LogicalResourceId: event.LogicalResourceId,
        Data: { RuleSetName: 'email-service-receiving' },
      }),
    });
    expect(response.status).toBe(200);
  };

describe('the custom resource at a local start', () => {
  it('is created at the first start and updated, with its physical id, at the next', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'receiving-'));
    try {
      const seen: CloudFormationCustomResourceEvent[] = [];
      const run = () =>
        runCustomResource({
          handler: answering('SUCCESS', seen),
          properties: { RuleSetName: 'email-service-receiving' },
          region: 'us-east-1',
          file: join(dir, 'resource.json'),
        });
      expect(await run()).toEqual({
        PhysicalResourceId: 'receiving-email-service-receiving',
        Data: { RuleSetName: 'email-service-receiving' },
        record: {
          PhysicalResourceId: 'receiving-email-service-receiving',
          ResourceProperties: expect.objectContaining({ RuleSetName: 'email-service-receiving' }),
        },
      });
      await run();
      expect(seen.map((e) => e.RequestType)).toEqual(['Create', 'Update']);
      expect(seen[0]).toMatchObject({
        ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:set-up-receiving',
        ResourceType: 'Custom::Receiving',
        ResourceProperties: {
          ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:set-up-receiving',
          RuleSetName: 'email-service-receiving',
        },
      });
      expect(seen[1]).toMatchObject({
        PhysicalResourceId: 'receiving-email-service-receiving',
        OldResourceProperties: seen[0]?.ResourceProperties,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is deleted, with its physical id, as the stack's deletion deletes it, kept in memory or in its file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'receiving-'));
    try {
      const seen: CloudFormationCustomResourceEvent[] = [];
      const file = join(dir, 'resource.json');
      const run = (options: { previous?: ResourceRecord; deleting?: boolean; file?: string }) =>
        runCustomResource({
          handler: answering('SUCCESS', seen),
          properties: { RuleSetName: 'email-service-receiving' },
          region: 'us-east-1',
          ...options,
        });
      const { record } = await run({});
      await run({ previous: record });
      await run({ previous: record, deleting: true });
      await run({ file });
      await run({ file, deleting: true });
      expect(seen.map((e) => e.RequestType)).toEqual(['Create', 'Update', 'Delete', 'Create', 'Delete']);
      expect(seen[2]).toMatchObject({
        PhysicalResourceId: 'receiving-email-service-receiving',
        ResourceProperties: { RuleSetName: 'email-service-receiving' },
      });
      // Gone with the stack: the next start creates it again.
      expect(existsSync(file)).toBe(false);
      await expect(run({ deleting: true })).rejects.toThrow(/never created/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops the start when the handler answers FAILED, with its reason, as a deploy fails', async () => {
    await expect(
      runCustomResource({ handler: answering('FAILED', []), properties: {}, region: 'us-east-1' }),
    ).rejects.toThrow(/FAILED: no rule set could be made/);
  });

  it('stops the start when the handler never answers', async () => {
    await expect(
      runCustomResource({
        handler: async () => undefined,
        properties: {},
        region: 'us-east-1',
        timeoutMs: 200,
      }),
    ).rejects.toThrow(/no answer/);
  });
});

describe("the Lambda action's asynchronous invocation", () => {
  const arn = 'arn:aws:lambda:us-east-1:000000000000:function:receive-email';

  it('retries a failing function twice, then sends Lambda’s invocation record to the failure destination', async () => {
    const records: Record<string, unknown>[] = [];
    let calls = 0;
    const invokeAsync = asyncInvoker<{ id: string }>({
      functionName: 'receive-email',
      functionArn: arn,
      handler: async () => {
        calls++;
        throw new Error('parser down');
      },
      timeoutMs: 1_000,
      retryDelaysMs: [1, 1],
      onFailure: async (record) => {
        records.push(record);
      },
    });
    await invokeAsync({ id: 'event-1' });
    expect(calls).toBe(3);
    expect(records).toEqual([
      {
        version: '1.0',
        timestamp: expect.any(String),
        requestContext: {
          requestId: expect.any(String),
          functionArn: `${arn}:$LATEST`,
          condition: 'RetriesExhausted',
          approximateInvokeCount: 3,
        },
        requestPayload: { id: 'event-1' },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        responsePayload: { errorType: 'Error', errorMessage: 'parser down', trace: expect.any(Array) },
      },
    ]);
  });

  it('sends nothing when a retry succeeds', async () => {
    const records: unknown[] = [];
    let calls = 0;
    await asyncInvoker({
      functionName: 'receive-email',
      functionArn: arn,
      handler: async () => {
        if (++calls === 1) throw new Error('once');
      },
      timeoutMs: 1_000,
      retryDelaysMs: [1, 1],
      onFailure: async (record) => records.push(record),
    })({});
    expect(calls).toBe(2);
    expect(records).toEqual([]);
  });
});
