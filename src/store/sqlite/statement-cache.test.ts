import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { cachePreparedStatements } from './statement-cache.js';

function db(limit?: number): Database.Database {
  const d = new Database(':memory:');
  d.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
  cachePreparedStatements(d, limit);
  return d;
}

describe('cachePreparedStatements', () => {
  it('hands out the statement prepared before for the same text, with its modes as a fresh one has them', () => {
    const d = db();
    const plucked = d.prepare('SELECT a FROM t ORDER BY a').pluck();
    assert.deepEqual(plucked.all(), [1, 2]);
    const again = d.prepare('SELECT a FROM t ORDER BY a');
    assert.equal(again, plucked, 'the same statement');
    assert.deepEqual(again.all(), [{ a: 1 }, { a: 2 }], 'pluck is off again');
    assert.deepEqual(d.prepare('SELECT a FROM t ORDER BY a').raw().all(), [[1], [2]]);
    assert.deepEqual(d.prepare('SELECT a FROM t ORDER BY a').get(), { a: 1 }, 'raw is off again');
    const insert = d.prepare('INSERT INTO t VALUES (?, ?)');
    insert.run(3, 'z');
    assert.equal(d.prepare('INSERT INTO t VALUES (?, ?)'), insert, 'a writer too');
    d.close();
  });

  it('prepares a fresh statement while the cached one is still iterating', () => {
    const d = db();
    const outer = d.prepare('SELECT a FROM t ORDER BY a');
    const seen: number[] = [];
    for (const row of outer.iterate() as Iterable<{ a: number }>) {
      const inner = d.prepare('SELECT a FROM t ORDER BY a');
      assert.notEqual(inner, outer);
      seen.push(row.a, (inner.all() as { a: number }[]).length);
    }
    assert.deepEqual(seen, [1, 2, 2, 2]);
    assert.equal(d.prepare('SELECT a FROM t ORDER BY a'), outer, 'the cached one once it is done');
    d.close();
  });

  it('keeps at most `limit` texts, starting over when full', () => {
    const d = db(2);
    const first = d.prepare('SELECT 1');
    d.prepare('SELECT 2');
    assert.equal(d.prepare('SELECT 1'), first);
    d.prepare('SELECT 3'); // full: starts over
    assert.notEqual(d.prepare('SELECT 1'), first);
    d.close();
  });
});
