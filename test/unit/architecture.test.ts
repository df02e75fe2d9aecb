import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/routes.js';

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );

const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');

describe('architecture', () => {
  it('keeps the core free of AWS SDKs, middy and the adapters', () => {
    const core = [
      'shared',
      'emails',
      'templates',
      'domains',
      'webhooks',
      'api-keys',
      'suppressions',
      'request-logs',
      'metrics',
    ].flatMap((concept) => filesUnder(`functions/${concept}`));
    const offending = core.flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^@aws-sdk\/|^@middy\/|^aws-lambda$|\/adapters\/|\/handlers\/|\/http\//.test(spec))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('keeps business logic out of the CDK code: lib/ reads only declarations of the functions', () => {
    const fromFunctions = filesUnder('lib').flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.includes('functions/'))
        .map((spec) => spec.replace(/^(\.\.\/)+/, '')),
    );
    // The catalog (environment and access per function), the route table, the table layout (and
    // its settings: shards, retention, the time index of each upgrade step), the
    // send timings, the counters' names, the webhook retry schedule, the front door's header name,
    // and the limits (how far ahead an email may be scheduled, which the content's retention must cover),
    // the request logs' line marker (the subscription filter's pattern) and default retention,
    // the Regions where SES receives (receiving is made only there), the received mail's key
    // prefixes (its lifecycle rule, SES's S3 action) and the content prefixes' type, and the audience
    // queues' settings (their workers' timeouts, receives and concurrency: shared with npm start),
    // and the SMTP relay's access (its task role's grants) and fixed numbers (ports, metric, grace).
    expect([...new Set(fromFunctions)].sort()).toEqual([
      'functions/adapters/dynamodb/email-keys.js',
      'functions/adapters/dynamodb/table.js',
      'functions/catalog.js',
      'functions/domains/receiving-regions.js',
      'functions/emails/send-timings.js',
      'functions/http/front-door.js',
      'functions/receiving/model.js',
      'functions/request-logs/model.js',
      'functions/routes.js',
      'functions/shared/audience-queues.js',
      'functions/shared/function-spec.js',
      'functions/shared/limits.js',
      'functions/shared/ports.js',
      'functions/smtp-relay/access.js',
      'functions/smtp-relay/settings.js',
      'functions/webhooks/model.js',
    ]);
  });

  it("keeps the API guide's endpoint and permission table equal to the route table", () => {
    const guide = readFileSync('docs/api.md', 'utf8');
    const rows = [...guide.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) (\/[^`]*)` \| `(\w+)` \|/gm)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]}`,
    );
    expect(rows).toEqual(ROUTES.map((r) => `${r.method} ${r.path} ${r.permission}`));
  });
});
