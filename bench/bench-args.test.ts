/**
 * Every benchmark script answers `--help` with its usage and a bad flag with an error and the
 * usage (exit 2), never a stack trace, and without starting its benchmark.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The compiled entry points: scripts that parse their flags with benchArgs. */
const scripts = readdirSync(here).filter(
  (f) =>
    f.endsWith('.js') &&
    !f.endsWith('.test.js') &&
    f !== 'bench-args.js' &&
    readFileSync(join(here, f), 'utf8').includes('benchArgs('),
);

describe('benchmark scripts: --help and bad flags', () => {
  it('finds the entry points', () => assert.ok(scripts.length >= 13, scripts.join(', ')));
  for (const script of scripts) {
    it(script, () => {
      const help = spawnSync(process.execPath, [join(here, script), '--help'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, /^usage: (npm run bench:|node dist\/bench\/)/);
      const bad = spawnSync(process.execPath, [join(here, script), '--no-such-flag'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(bad.status, 2, bad.stdout + bad.stderr);
      assert.match(bad.stderr, /^error: Unknown option '--no-such-flag'[\s\S]*usage:/);
      assert.doesNotMatch(bad.stderr, /^\s+at /m, 'no stack trace');
    });
  }
});
