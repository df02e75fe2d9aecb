import { buildFunction } from './lib/bundling.ts';
const [name, filter, n] = process.argv.slice(2);
const b = await buildFunction(name, `/tmp/an/${name}`);
const inputs: Record<string, number> = {};
for (const [p, o] of Object.entries(b.metafile.outputs)) { const rel = b.files.find(f => p.endsWith(f.path)); if (!rel?.init) continue; for (const [k, v] of Object.entries(o.inputs)) inputs[k] = (inputs[k] ?? 0) + v.bytesInOutput; }
const groups: Record<string, number> = {};
for (const [file, bytes] of Object.entries(inputs)) {
  if (filter !== 'pkg') { if (file.includes(filter)) groups[file.replace(/.*node_modules\//, '')] = bytes; continue; }
  const m = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  const key = m ? m[1] : file.split('/').slice(0, 2).join('/');
  groups[key] = (groups[key] ?? 0) + bytes;
}
for (const [k, v] of Object.entries(groups).sort((a, b) => b[1] - a[1]).slice(0, Number(n ?? 25))) console.log((v / 1024).toFixed(1).padStart(7), k);
