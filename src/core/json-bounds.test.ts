import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonBoundsProblem } from './json-bounds.js';

const bounds = { depth: 4, keys: 3, items: 4, total: 20 };

describe('jsonBoundsProblem', () => {
  it('passes documents within the bounds, whatever their strings hold', () => {
    assert.equal(jsonBoundsProblem('{"a": [1, 2, 3, 4], "b": {"c": "x,y,{[\\"]}"}, "d": []}', bounds), undefined);
    assert.equal(jsonBoundsProblem('"a,b,c,d,e"', bounds), undefined);
    assert.equal(jsonBoundsProblem('{}', bounds), undefined);
  });

  it('names the object or array that is too large', () => {
    assert.equal(
      jsonBoundsProblem('{"name": "x", "env": {"A": "1", "B": "2", "C": "3", "D": "4"}}', bounds),
      'env: more than 3 keys',
    );
    assert.equal(jsonBoundsProblem('{"command": ["a", "b", "c", "d", "e"]}', bounds), 'command: more than 4 elements');
    assert.equal(jsonBoundsProblem('{"a": {"b": [[[1]]]}}', bounds), 'a.b.0.0: nested deeper than 4 levels');
    assert.match(
      jsonBoundsProblem(`[${Array.from({ length: 4 }, () => '[1,2,3,4]').join(',')}, [1,2]]`, {
        ...bounds,
        items: 10,
      }) ?? '',
      /more than 20 entries in all/,
    );
  });

  it('tells escaped quotes from the end of a string', () => {
    assert.equal(
      jsonBoundsProblem('{"a\\\\": "\\\\", "b": "\\"", "c": 1, "d": 2}', bounds),
      '(body): more than 3 keys',
    );
  });

  it('never fails on malformed text (JSON.parse judges it)', () => {
    for (const text of ['{"a": ', '"unterminated', ']]]}}}', '{{{', ',,,', ''])
      assert.doesNotThrow(() => jsonBoundsProblem(text, bounds));
  });

  it('stops at the first bound: 200,000 keys are refused in a fraction of their JSON.parse', () => {
    const env = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`K${i}`, 'v']));
    const text = JSON.stringify({ name: 'x', command: ['true'], env });
    // The quickest of five scans: a pause of a loaded machine (or a collection) is not the scan's work.
    let scan_ms = Infinity;
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now();
      assert.equal(
        jsonBoundsProblem(text, { depth: 16, keys: 1024, items: 10_000, total: 200_000 }),
        'env: more than 1024 keys',
      );
      scan_ms = Math.min(scan_ms, performance.now() - t0);
    }
    const t1 = performance.now();
    JSON.parse(text);
    const parse_ms = performance.now() - t1;
    // Measured against JSON.parse of the same text, as the machine's speed varies.
    assert.ok(scan_ms < parse_ms / 10, `scan ${scan_ms.toFixed(1)} ms, JSON.parse ${parse_ms.toFixed(1)} ms`);
  });
});
