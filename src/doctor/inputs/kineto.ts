/** PyTorch profiler (Kineto) traces: streamed; analysed per run once every input is read. */
import { loadKinetoTrace } from '../parse/kineto/load-trace.js';
import type { KinetoRank } from '../parse/kineto/kineto-collector.js';
import { inputRow } from './handler.js';

/**
 * The legacy chrome trace of torch 1.x (`export_chrome_trace` without Kineto, e.g. Debian's CPU
 * build): a bare array of complete events whose names are PyTorch operators. Horovod timelines and
 * step-breakdown arrays are recognised before this row (inputs/table.ts).
 */
export function looksLikeLegacyTrace(head: string): boolean {
  if (!head.startsWith('[') || !/^\[\s*\{/.test(head)) return false;
  return (
    /"ph"\s*:\s*"X"/.test(head) &&
    /"ts"\s*:/.test(head) &&
    (/"pid"\s*:\s*"CPU functions"/.test(head) ||
      /"name"\s*:\s*"(aten::|ProfilerStep#|enumerate\(DataLoader\)|autograd::|Optimizer\.)/.test(head) ||
      /"cat"\s*:\s*"(cpu_op|kernel|cuda_runtime|user_annotation)"/.test(head))
  );
}

export const kinetoInput = inputRow<KinetoRank>({
  kind: 'pytorch-trace',
  detect: (head) =>
    (head.startsWith('{') && /"(traceEvents|schemaVersion|deviceProperties|distributedInfo)"\s*:/.test(head)) ||
    looksLikeLegacyTrace(head),
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
