#!/usr/bin/env node
// Fails when the relative-import graph under the given folder has a cycle.
// Type-only imports count too: a cycle of types is still a tangle of modules.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'src');
const importPattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g;

function listSources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listSources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = listSources(root);
const graph = new Map();
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const targets = [];
  for (const match of text.matchAll(importPattern)) {
    const target = resolve(dirname(file), match[1].replace(/\.js$/, '.ts'));
    if (graph.has(target) || files.includes(target)) targets.push(target);
  }
  graph.set(file, targets);
}

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
for (const file of files) if (!state.has(file)) visit(file, []);

if (cycles.length > 0) {
  for (const cycle of cycles) console.error('import cycle: ' + cycle.map((f) => relative(root, f)).join(' -> '));
  process.exit(1);
}
console.log(`no import cycles in ${files.length} modules under ${relative(process.cwd(), root) || '.'}`);
