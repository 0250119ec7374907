#!/usr/bin/env node
// Checks what `npm pack` would ship (package.json "files"; run after `npm run build`):
// 1. no test code: no compiled test, nothing under a testing/ folder, and no module of src/ that
//    only tests (or other test-only modules) import, e.g. a conformance suite or a fixture: such
//    a module goes under a testing/ folder or gets a "!dist/src/..." entry in package.json "files";
// 2. every relative import of a shipped module is shipped too (an exclusion that a shipped module
//    still needs would break the installed package).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

// `from '...'`, a side-effect `import '...'` and a dynamic `import('...')`, relative ones only.
const importPattern =
  /(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;
const importsOf = (file) =>
  [...readFileSync(file, 'utf8').matchAll(importPattern)].map((m) =>
    relative('.', resolve(dirname(file), m[1] ?? m[2]))
      .split('\\')
      .join('/'),
  );

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const packed = JSON.parse(
  execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }),
);
const shipped = new Set(packed[0].files.map((f) => f.path));
const problems = [];

for (const path of shipped) {
  if (/\.test\.[cm]?js$/.test(path) || /(^|\/)testing\//.test(path)) problems.push(`${path}: test code in the package`);
}

// Modules of src/ that only tests import (to a fixed point: a fixture imported only by a conformance suite is one too).
const list = (dir) =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory()
      ? list(p)
      : /\.tsx?$/.test(n) && !n.endsWith('.d.ts')
        ? [p.split('\\').join('/')]
        : [];
  });
// web/ is the browser app: what it imports from src/ is bundled into dist/web, so it counts as a use.
const sources = ['src', 'web', 'test-support', 'bench'].flatMap(list);
const importers = new Map();
for (const file of sources) {
  for (const target of importsOf(file)) {
    const ts = target.replace(/\.js$/, '.ts');
    importers.set(ts, [...(importers.get(ts) ?? []), file]);
  }
}
const isTest = (f) => /\.test\.tsx?$/.test(f) || !(f.startsWith('src/') || f.startsWith('web/'));
const testOnly = new Set();
for (let changed = true; changed;) {
  changed = false;
  for (const file of sources.filter((f) => f.startsWith('src/') && !isTest(f) && !testOnly.has(f))) {
    const by = importers.get(file) ?? [];
    if (by.length > 0 && by.every((i) => isTest(i) || testOnly.has(i))) {
      testOnly.add(file);
      changed = true;
    }
  }
}
for (const file of testOnly) {
  const js = `dist/${file.replace(/\.tsx?$/, '.js')}`;
  if (shipped.has(js))
    problems.push(
      `${js}: only tests import ${file} (${importers.get(file).join(', ')}), yet it ships; exclude it in package.json "files" or move it under a testing/ folder`,
    );
}

for (const path of shipped) {
  if (!path.endsWith('.js') || !path.startsWith('dist/src/')) continue;
  for (const target of importsOf(path)) {
    if (!shipped.has(target))
      problems.push(`${path} imports ${target}, which the package leaves out (package.json "files")`);
  }
}

if (problems.length > 0) {
  console.error(`check-package: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `check-package: ${shipped.size} files ship, no test code among them (${testOnly.size} test-only modules of src/ left out), every import of a shipped module ships`,
);
