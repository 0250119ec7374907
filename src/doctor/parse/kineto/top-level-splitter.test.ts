import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { syntheticTraceChunks } from '../../../../test-support/doctor/synthetic-trace.js';
import { TopLevelSplitter } from './top-level-splitter.js';

function split(
  text: string,
  chunk: number,
): { elements: unknown[]; members: Record<string, unknown>; complete: boolean } {
  const elements: unknown[] = [];
  const members: Record<string, unknown> = {};
  const s = new TopLevelSplitter({ onElement: (v) => elements.push(v), onMember: (k, v) => (members[k] = v) });
  for (let i = 0; i < text.length; i += chunk) s.feed(text.slice(i, i + chunk));
  return { elements, members, complete: s.finish() };
}

describe('TopLevelSplitter', () => {
  const doc = JSON.stringify(
    {
      schemaVersion: 1,
      deviceProperties: [{ name: 'A100 "x" {y}', id: 0 }],
      traceEvents: [
        { name: 'a\\"}]{', ts: 1.5, args: { s: [1, { t: '}' }] } },
        { name: 'b', ts: -2e-3 },
        7,
        'str',
        null,
      ],
      after: { ok: true },
      n: -12.5e3,
      t: true,
    },
    null,
    1,
  );

  it('yields the same elements and members at every chunk size, including one character', () => {
    const expected = JSON.parse(doc) as Record<string, unknown>;
    for (const chunk of [1, 2, 3, 7, 64, doc.length]) {
      const got = split(doc, chunk);
      assert.deepEqual(got.elements, expected['traceEvents'], `chunk ${chunk}`);
      assert.deepEqual(got.members, {
        schemaVersion: 1,
        deviceProperties: expected['deviceProperties'],
        after: { ok: true },
        n: -12500,
        t: true,
      });
      assert.equal(got.complete, true);
    }
  });

  it('keeps the complete events of a truncated file and reports it incomplete', () => {
    const cut = doc.slice(0, doc.indexOf('"b"') + 4);
    const got = split(cut, 5);
    assert.equal(got.elements.length, 1);
    assert.equal(got.complete, false);
  });

  it('splits a bare array (legacy chrome trace) at every chunk size, and rejects other documents', () => {
    const arr = JSON.stringify([{ name: 'a]', ts: 1 }, { name: 'b', args: { x: [1, 2] } }, 3]);
    for (const chunk of [1, 4, arr.length]) {
      const got = split(arr, chunk);
      assert.deepEqual(got.elements, JSON.parse(arr));
      assert.equal(got.complete, true);
    }
    assert.equal(split(arr.slice(0, -1), 3).complete, false);
    assert.throws(() => split('"text"', 3), SyntaxError);
    assert.throws(() => split('12', 3), SyntaxError);
  });

  it('streams a generated multi-MB trace with bounded heap', () => {
    if (global.gc) global.gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let count = 0;
    let chars = 0;
    const s = new TopLevelSplitter({ onElement: () => count++, onMember: () => undefined });
    for (const chunk of syntheticTraceChunks(
      { rank: 0, worldSize: 1, steps: 4, kernelsPerStep: 4000, seed: 1 },
      1 << 16,
    )) {
      chars += chunk.length;
      s.feed(chunk);
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    assert.equal(s.finish(), true);
    assert.ok(chars > 5_000_000, `generated ${chars} chars`);
    assert.equal(count, 4 * 2 + 4 * 4000 * 4);
    // The text is never held whole: the heap grows far less than the document size.
    assert.ok(peak - before < chars / 2, `heap grew ${peak - before} bytes for ${chars} chars`);
  });
});
