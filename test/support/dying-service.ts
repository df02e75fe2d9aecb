import { startPartThread } from '../../local/threads.js';

/** Starts test/support/dying-part.ts and has it die (test/integration/threads.test.ts). */
const thread = await startPartThread(new URL('./dying-part.ts', import.meta.url), { name: 'consumers' });
await thread.call('die');
setTimeout(() => {
  console.log('still running');
  process.exit(0);
}, 5000);
