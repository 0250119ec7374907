import { TopLevelSplitter } from './top-level-splitter.js';
import type { KinetoRank } from './kineto-collector.js';
import { addKinetoEvent, addKinetoMember, newKinetoRank } from './kineto-collector.js';
import { textChunks } from '../../io/read-files.js';

/** Result of streaming one Kineto trace file. */
export interface LoadedTrace {
  readonly data: KinetoRank;
  /** False when the file ended before the JSON was closed (events read so far are kept). */
  readonly complete: boolean;
}

/**
 * Streams a PyTorch profiler trace (Kineto object or legacy bare array), `.json` or gzip, event by event: memory grows with the
 * number of GPU activities and runtime calls kept in compact columns, never with the file size.
 * Throws SyntaxError on malformed JSON.
 */
export async function loadKinetoTrace(path: string): Promise<LoadedTrace> {
  const data = newKinetoRank(path);
  const splitter: TopLevelSplitter = new TopLevelSplitter({
    onElement: (ev) => {
      data.legacy ||= splitter.bareArray;
      addKinetoEvent(data, ev);
    },
    onMember: (key, value) => addKinetoMember(data, key, value),
  });
  for await (const chunk of textChunks(path)) splitter.feed(chunk);
  const complete = splitter.finish();
  if (!data.rankFromMetadata) {
    // Older traces lack distributedInfo; launchers name files like "rank-3.json.gz" or "worker3_rank3".
    const m = /rank[-_.]?(\d+)/i.exec(path.split(/[\\/]/).pop() ?? '');
    if (m) data.rank = Number(m[1]);
  }
  return { data, complete };
}
