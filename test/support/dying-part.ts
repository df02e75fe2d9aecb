import { partData, servePart } from '../../local/threads.js';

/** A local service thread that starts, answers `echo`, then dies when told to (test/integration/threads.test.ts). */
await servePart(async () => ({
  started: { hello: partData<{ name: string }>().name },
  methods: {
    echo: (value: string) => value,
    die: () => {
      setTimeout(() => process.exit(3), 10);
      return 'dying';
    },
  },
}));
