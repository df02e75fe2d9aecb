import { buildFunctions, initFiles } from '../work/main/lib/bundling.js';
const names = process.argv.slice(2);
const out = '/tmp/bsize-out';
const built = await buildFunctions(names, out);
for (const [name, fn] of Object.entries(built)) {
  console.log(name, fn.initBytes);
  const init = initFiles(fn.metafile, `${out}/${name}`);
  const byInput = new Map<string, number>();
  for (const [path, o] of Object.entries(fn.metafile.outputs)) {
    const rel = path;
    if (![...init].some((f) => rel.endsWith(f.split('/').pop()!))) continue;
    for (const [inp, v] of Object.entries(o.inputs)) byInput.set(inp, (byInput.get(inp) ?? 0) + v.bytesInOutput);
  }
  const top = [...byInput].filter(([k]) => k.startsWith('functions/')).sort((a, b) => b[1] - a[1]).slice(0, 40);
  for (const [k, v] of top) console.log(String(v).padStart(7), k);
}
