#!/usr/bin/env node
// Structure checks of the source tree under the given folder (default src):
// 1. no cycle in the relative-import graph of modules (type-only imports count too: a cycle of
//    types is still a tangle of modules; tests count);
// 2. no cycle between top-level folders, and no import from a lower layer to a higher one, the
//    layers being the numbered list under "## Layers" in docs/architecture.md (tests excluded:
//    a test may drive its folder from above, e.g. through the HTTP client);
// 3. no source file over MAX_LINES lines, in the given folder and in python/ (the SDK);
// 4. at most MAX_LONG_LINES lines over LONG_LINE characters in its non-test sources (tests and
//    testing/ folders excluded); prettier cannot break a long string literal, so such a line is
//    split by hand into concatenated pieces. The count is printed, and a file outside KNOWN_LONG
//    that has such a line is named in a warning, so that a new one is seen before the cap is hit.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? 'src');
const architecture = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'architecture.md');
const importPattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;
const MAX_LINES = 400;
const LONG_LINE = 150;
const MAX_LONG_LINES = 100;
/** Files (relative to the checked folder) allowed long lines without a warning: regex literals. */
const KNOWN_LONG = new Set([
  'admission/script-launch.ts',
  'backends/conformance.ts',
  'backends/slurm/slurm-cli.ts',
  'backends/slurm/slurm-states.ts',
  'control/replicas/failure-hint.ts',
  'doctor/parse/xml-reader.ts',
]);

function listSources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listSources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Depth-first search; returns every cycle found as a list of nodes (first = last). */
function findCycles(graph) {
  const state = new Map(); // 1 = on stack, 2 = done
  const cycles = [];
  function visit(node, stack) {
    state.set(node, 1);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 1) cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next, stack);
    }
    stack.pop();
    state.set(node, 2);
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node, []);
  return cycles;
}

/** Folder -> layer number, from the numbered list under "## Layers" in docs/architecture.md. */
function readLayers() {
  const text = readFileSync(architecture, 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Layers'));
  if (!section) throw new Error(`${architecture}: no "## Layers" section`);
  const layers = new Map();
  for (const line of section.split('\n')) {
    const item = /^(\d+)\.\s+(.*)$/.exec(line);
    if (!item) continue;
    for (const folder of item[2].matchAll(/`([a-z-]+)\/`/g)) layers.set(folder[1], Number(item[1]));
  }
  return layers;
}

const files = listSources(root);
const fileSet = new Set(files);
const topFolder = (file) => relative(root, file).split(sep)[0];
const graph = new Map();
const folderEdges = new Map(); // "from -> to" -> an example import
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets = [];
  for (const match of text.matchAll(importPattern)) {
    const target = resolve(dirname(file), match[1].replace(/\.js$/, '.ts'));
    if (!fileSet.has(target)) continue;
    targets.push(target);
    const from = topFolder(file);
    const to = topFolder(target);
    if (from !== to && !file.endsWith('.test.ts')) {
      const key = `${from} -> ${to}`;
      if (!folderEdges.has(key)) folderEdges.set(key, `${relative(root, file)} imports ${match[1]}`);
    }
  }
  graph.set(file, targets);
}

const problems = [];
for (const cycle of findCycles(graph))
  problems.push('import cycle: ' + cycle.map((f) => relative(root, f)).join(' -> '));

const folderGraph = new Map();
for (const key of folderEdges.keys()) {
  const [from, to] = key.split(' -> ');
  folderGraph.set(from, [...(folderGraph.get(from) ?? []), to]);
}
for (const cycle of findCycles(folderGraph)) problems.push('folder cycle: ' + cycle.join(' -> '));

const layers = readLayers();
const folders = new Set(files.filter((f) => relative(root, f).includes(sep)).map(topFolder));
for (const folder of folders)
  if (!layers.has(folder)) problems.push(`folder ${folder}/ is in no layer of docs/architecture.md ("## Layers")`);
for (const [key, example] of folderEdges) {
  const [from, to] = key.split(' -> ');
  if (layers.has(from) && layers.has(to) && layers.get(to) > layers.get(from)) {
    problems.push(
      `layer violation: ${from}/ (layer ${layers.get(from)}) imports ${to}/ (layer ${layers.get(to)}): ${example}`,
    );
  }
}

// The cap covers the Python SDK too (python/, beside src/ in the repository).
const pythonRoot = join(dirname(fileURLToPath(import.meta.url)), '..', 'python');
const listPython = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === '__pycache__' || name.startsWith('.') ? [] : listPython(path);
    return name.endsWith('.py') ? [path] : [];
  });
const pythonFiles = existsSync(pythonRoot) ? listPython(pythonRoot) : [];
for (const file of [...files, ...pythonFiles]) {
  const name = relative(pythonFiles.includes(file) ? join(pythonRoot, '..') : root, file)
    .split(sep)
    .join('/');
  const lines = readFileSync(file, 'utf8').split('\n').length - 1;
  if (lines > MAX_LINES) problems.push(`${name} has ${lines} lines (at most ${MAX_LINES}): split it`);
}

const longLines = new Map(); // file (relative to root) -> lines over LONG_LINE characters
for (const file of files) {
  const name = relative(root, file).split(sep).join('/');
  if (name.endsWith('.test.ts') || name.split('/').includes('testing')) continue;
  const n = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > LONG_LINE).length;
  if (n > 0) longLines.set(name, n);
}
const longCount = [...longLines.values()].reduce((a, b) => a + b, 0);
const newLong = [...longLines.keys()].filter((name) => !KNOWN_LONG.has(name));
if (newLong.length > 0)
  console.warn(
    `warning: lines over ${LONG_LINE} characters in ${newLong.map((f) => `${f} (${longLines.get(f)})`).join(', ')}: ` +
      'split long strings into concatenated pieces (the text unchanged)',
  );
if (longCount > MAX_LONG_LINES)
  problems.push(
    `${longCount} lines over ${LONG_LINE} characters in non-test sources (at most ${MAX_LONG_LINES}): ` +
      'split long strings into concatenated pieces',
  );

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(
  `no import cycles, no folder cycles, no layer violations, no file over ${MAX_LINES} lines (python/ too), ` +
    `${longCount} line(s) over ${LONG_LINE} characters in non-test sources (at most ${MAX_LONG_LINES}): ` +
    `${files.length} modules in ${folders.size} folders under ${relative(process.cwd(), root) || '.'}`,
);
