#!/usr/bin/env node
// Runs every compiled TypeScript test (dist/**/*.test.js) with Node's test runner, then the
// Python SDK's pytest suite when it exists. Exit code is non-zero if either fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function listTests(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTests(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const filter = process.argv[2];
// A compiled test whose TypeScript source was renamed or removed stays in dist/ (tsc does not
// delete outputs): it would run against today's modules and fail for no reason in the source.
const hasSource = (test) => existsSync(test.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
const compiled = listTests('dist');
const stale = compiled.filter((t) => !hasSource(t));
if (stale.length > 0) console.error(`run-tests: skipping ${stale.length} compiled test(s) without a source (stale in dist/; 'rm -rf dist && npm run build' clears them): ${stale.join(', ')}`);
const tests = compiled.filter((t) => hasSource(t) && (!filter || t.includes(filter))).sort();
let failed = false;
if (tests.length > 0) {
  const node = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...tests], { stdio: 'inherit' });
  failed ||= node.status !== 0;
}
const pythonTests = 'python/tests';
if (!filter && existsSync(pythonTests)) {
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const py = spawnSync(python, ['-m', 'pytest', '-q', pythonTests], { stdio: 'inherit' });
  failed ||= py.status !== 0;
}
process.exit(failed ? 1 : 0);
