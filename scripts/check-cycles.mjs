#!/usr/bin/env node
// Structure checks of the source tree under the given folder (default src):
// 1. no cycle in the relative-import graph of modules (type-only imports count too: a cycle of
//    types is still a tangle of modules; tests count);
// 2. no cycle between top-level folders, and no import from a lower layer to a higher one, the
//    layers being the numbered list under "## Layers" in docs/architecture.md (tests excluded:
//    a test may drive its folder from above, e.g. through the HTTP client);
// 3. no source file over MAX_LINES lines, in the given folder and in python/ (the SDK).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? 'src');
const architecture = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'architecture.md');
const importPattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;
const MAX_LINES = 400;

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

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(
  `no import cycles, no folder cycles, no layer violations, no file over ${MAX_LINES} lines (python/ too): ${files.length} modules in ${folders.size} folders under ${relative(process.cwd(), root) || '.'}`,
);
