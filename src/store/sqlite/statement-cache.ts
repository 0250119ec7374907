import type Database from 'better-sqlite3';

/**
 * Makes `db.prepare` return the statement it prepared before for the same SQL text: the store's
 * queries prepare their SQL at each call, and compiling it was 4-6% of a 16,384-GPU server's CPU
 * (bench:scale, issue #49). A cached statement is handed out with its modes reset (pluck, raw and
 * expand off), as a fresh one has them; one still iterating is busy, so a fresh one is prepared
 * instead. At most `limit` texts are kept (SQL built per call, such as IN lists, would grow it
 * without end): the cache starts over when full.
 */
export function cachePreparedStatements(db: Database.Database, limit = 256): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  const cached = (source: string): Database.Statement => {
    const known = cache.get(source);
    if (known && !known.busy) {
      if (known.reader) known.pluck(false).raw(false).expand(false);
      return known;
    }
    const fresh = prepare(source);
    if (known) return fresh;
    if (cache.size >= limit) cache.clear();
    cache.set(source, fresh);
    return fresh;
  };
  db.prepare = cached as Database.Database['prepare'];
}
