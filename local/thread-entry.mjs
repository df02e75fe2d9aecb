// A local service thread's entry (threads.ts): the part it runs is TypeScript, read through tsx as
// the rest of the local runtime is (tsx is a development dependency; nothing here runs on Lambda).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
