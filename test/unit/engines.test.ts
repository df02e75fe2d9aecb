import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` warns EBADENGINE for every installed package whose `engines.node` the running Node does
 * not satisfy (npm-install-checks: `semver.satisfies(node, engines.node, { includePrerelease: true })`).
 * The Node versions the project promises (package.json's `engines`, as the README says them) must
 * satisfy every locked package's range, at the lowest of each: then no supported Node warns.
 */

// semver is what npm itself checks engines with (here through the tools that depend on it).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string, options?: { includePrerelease?: boolean }): boolean;
  minVersion(range: string): { version: string } | null;
};

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { engines?: { node?: string }; cpu?: string[]; os?: string[] }>;
};

/** The lowest version of each alternative of the promise (`^20.19.0 || >=22.13.0`: 20.19.0 and 22.13.0). */
const lowest = manifest.engines.node.split('||').map((range) => semver.minVersion(range.trim())?.version);

describe('the Node versions the project promises', () => {
  it('are named in the README as package.json names them', () => {
    expect(lowest.length).toBeGreaterThan(0);
    const readme = readFileSync('README.md', 'utf8');
    for (const version of lowest) {
      const [major, minor] = (version ?? '').split('.');
      expect(readme, `README names Node ${major}.${minor}`).toContain(`${major}.${minor}+`);
    }
  });

  it('satisfy every locked package’s engines, so npm ci warns EBADENGINE on none', () => {
    const refused: string[] = [];
    for (const version of lowest) {
      for (const [path, entry] of Object.entries(lock.packages)) {
        const range = entry.engines?.node;
        if (path && range && !semver.satisfies(version as string, range, { includePrerelease: true }))
          refused.push(`${path} requires node ${range}, not ${version}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
