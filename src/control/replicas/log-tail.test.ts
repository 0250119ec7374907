import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { logTail } from './log-tail.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-tail-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const log = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

describe('logTail', () => {
  it('keeps the last lines, without a partial first line', () => {
    const path = log('plain.log', Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n') + '\n\n');
    assert.equal(logTail(path, 3), 'line 47\nline 48\nline 49');
    const long = log('long.log', `${'x'.repeat(20_000)}\nlast`);
    assert.equal(logTail(long), 'last', 'the cut first line is dropped');
    assert.equal(logTail(join(dir, 'missing.log')), '');
    assert.equal(logTail(undefined), '');
  });

  it("keeps the error above torch's C++ stack dump: the frames count as one line", () => {
    const frames = Array.from(
      { length: 22 },
      (_, i) =>
        `frame #${i}: caffe2::serialize::PyTorchStreamWriter::writeRecord(...) + 0x${i}b7 (0x7ff790e5e437 in /lib/x86_64-linux-gnu/libtorch_cpu.so.1.13)`,
    );
    const path = log(
      'frames.log',
      [
        'Traceback (most recent call last):',
        'RuntimeError: [enforce fail at inline_container.cc:325] . unexpected pos 320 vs 248',
        "terminate called after throwing an instance of 'c10::Error'",
        ...frames,
        '',
      ].join('\n'),
    );
    assert.equal(
      logTail(path, 3),
      "RuntimeError: [enforce fail at inline_container.cc:325] . unexpected pos 320 vs 248\nterminate called after throwing an instance of 'c10::Error'\n[22 C++ stack frames left out]",
    );
  });

  it('stays within max_bytes, whole lines first', () => {
    const path = log('wide.log', `${'a'.repeat(3000)}\n${'b'.repeat(3000)}\n${'c'.repeat(100)}\n`);
    assert.equal(logTail(path, 20, 4096), `${'b'.repeat(3000)}\n${'c'.repeat(100)}`);
    assert.equal(logTail(path, 20, 50), 'c'.repeat(50), 'one line longer than the cap keeps its end');
  });
});
