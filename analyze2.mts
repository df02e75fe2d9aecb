import { build } from 'esbuild';
import { esbuildOptions } from './lib/bundling.ts';
const [name, filter] = process.argv.slice(2);
const r = await build({ ...esbuildOptions(`functions/handlers/${name}.ts`, `/tmp/an-${name}.mjs`), metafile: true, logLevel: 'error' });
const out = Object.values(r.metafile.outputs)[0];
const rows = Object.entries(out.inputs).filter(([f]) => f.includes(filter)).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput);
for (const [k, v] of rows.slice(0, 40)) console.log((v.bytesInOutput / 1024).toFixed(1).padStart(7), k.replace(/.*node_modules\//, ''));
