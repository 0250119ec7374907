import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { goodputErrorOf } from '../../test-support/sim/goodput-error.js';
import { readJobSpecDocument } from './job-spec-file.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-spec-file-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const yamlEnv = (n: number) =>
  `name: x\ncommand: ["true"]\nenv:\n${Array.from({ length: n }, (_, i) => `  K${i}: "v"\n`).join('')}`;

describe('spec files are read with bounded work (issue 47 item 11)', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('refuses a 50 MB file before reading it', () => {
    const path = join(dir, 'huge.yaml');
    writeFileSync(path, 'name: x\n');
    truncateSync(path, 50 << 20);
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const e = goodputErrorOf(() => readJobSpecDocument(path, dir));
    assert.equal(e.code, 'E_SPEC');
    assert.match(e.message, /is 50\.0 MiB; a spec file is at most 1 MiB/);
    assert.ok(performance.now() - t0 < 100);
    assert.ok(process.memoryUsage().rss - rss0 < 20 << 20, 'the file was not read');
  });

  it('refuses 20,000 and 100,000 env keys at once instead of parsing them for seconds', () => {
    for (const n of [20_000, 100_000]) {
      const path = file(`env-${n}.yaml`, n === 100_000 ? yamlEnv(n).slice(0, 1 << 20) : yamlEnv(n));
      const t0 = performance.now();
      const e = goodputErrorOf(() => readJobSpecDocument(path, dir));
      assert.match(e.message, /lines and commas, more than the 20000 a job spec may have/);
      assert.ok(performance.now() - t0 < 200, `${n} keys: ${(performance.now() - t0).toFixed(0)} ms`);
    }
    const json = file(
      'env.json',
      JSON.stringify({
        name: 'x',
        command: ['true'],
        env: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`K${i}`, 'v'])),
      }),
    );
    assert.match(goodputErrorOf(() => readJobSpecDocument(json, dir)).message, /env: more than 1024 keys/);
  });

  it('parses a large valid spec in linear time and still refuses a repeated key', () => {
    const path = file(
      'ok.yaml',
      `${yamlEnv(200)}args_note: "a, b"\n`.replace(
        'command: ["true"]',
        `command:\n${Array.from({ length: 4000 }, (_, i) => `  - "--a${i}"\n`).join('')}`,
      ),
    );
    const doc = readJobSpecDocument(path, dir);
    assert.equal(Object.keys(doc.env as object).length, 200);
    assert.equal((doc.command as string[]).length, 4000);
    const dup = file('dup.yaml', 'name: x\ncommand: ["true"]\nenv:\n  A: "1"\n  A: "2"\n');
    assert.match(
      goodputErrorOf(() => readJobSpecDocument(dup, dir)).message,
      /the key 'A' appears twice in one mapping \(line 5\)/,
    );
    assert.deepEqual(readJobSpecDocument(file('flow.yaml', '{name: x, command: ["true"]}'), dir), {
      name: 'x',
      command: ['true'],
    });
    assert.deepEqual(readJobSpecDocument(file('spec.json', '{"name": "x", "command": ["true"]}'), dir), {
      name: 'x',
      command: ['true'],
    });
  });
});
