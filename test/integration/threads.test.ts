import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startPartThread } from '../../local/threads.js';

const part = new URL('../support/dying-part.ts', import.meta.url);

describe('the local service threads', () => {
  it('start a part, pass it data, answer its calls, and stop it', async () => {
    const thread = await startPartThread<{ hello: string }>(part, { name: 'emulators' });
    expect(thread.started).toEqual({ hello: 'emulators' });
    expect(await thread.call('echo', 'ping')).toBe('ping');
    await expect(thread.call('nothing')).rejects.toThrow('no method nothing');
    await thread.stop();
    await expect(thread.call('echo', 'again')).rejects.toThrow('has ended');
  });

  it('end the whole process, loudly, when a part dies once running (the next start recovers)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/dying-service.ts'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stdout).not.toContain('still running');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('dying-part.ts) died: exit code 3; stopping');
  });
});
