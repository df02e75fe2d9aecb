#!/usr/bin/env node
/**
 * `tsx bin/build-smtp-relay.ts <outdir>`: builds the SMTP relay's container program
 * (functions/containers/smtp-relay.ts) into `<outdir>/index.mjs` (and its map) with lib/bundling.ts's
 * options. `cdk synth` runs it when the relay is on (lib/smtp-relay-image.ts): constructs are
 * synchronous, and esbuild's plugins need its asynchronous API. Built as if into one place in the
 * project, as the functions are, so the same sources give the same bytes (and image) on any machine.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { programBuildOptions } from '../lib/bundling.js';
import { RELAY_PROGRAM } from '../lib/smtp-relay-image.js';

const [outdir] = process.argv.slice(2);
if (!outdir) throw new Error('usage: build-smtp-relay <outdir>');
const at = fileURLToPath(new URL('../.build/smtp-relay', import.meta.url));
const result = await build({ ...programBuildOptions(RELAY_PROGRAM, at), write: false });
mkdirSync(outdir, { recursive: true });
for (const file of result.outputFiles) writeFileSync(join(outdir, relative(at, file.path)), file.contents);
