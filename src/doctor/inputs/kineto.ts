/** PyTorch profiler (Kineto) traces: streamed; analysed per run once every input is read. */
import { loadKinetoTrace } from '../parse/kineto/load-trace.js';
import type { KinetoRank } from '../parse/kineto/kineto-collector.js';
import { inputRow } from './handler.js';

export const kinetoInput = inputRow<KinetoRank>({
  kind: 'pytorch-trace',
  detect: (head) => head.startsWith('{') && /"(traceEvents|schemaVersion|deviceProperties|distributedInfo)"\s*:/.test(head),
  async parse(file, warn) {
    const { data, complete } = await loadKinetoTrace(file.path);
    if (!complete) warn(`${file.path}: trace ends before its JSON is closed; analysed the events read so far`);
    return data;
  },
  // Per-rank and cross-rank findings need the whole run (run-doctor.ts).
  findings: () => [],
  summarize(rank, file, parts) {
    parts.trace_groups.set(file.group, [...(parts.trace_groups.get(file.group) ?? []), rank]);
  },
});
