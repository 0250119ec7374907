import { looksLikeHorovodTimeline } from './parse/horovod-timeline.js';
import type { InputKind } from './report/model.js';

/**
 * Recognises an input by its first characters (never by file name). Pure; returns undefined for
 * anything unknown. The order matters: captures and NCCL logs contain CSV-like and `#` lines.
 */
export function detectKind(head: string): InputKind | undefined {
  const t = head.replace(/^\uFEFF/, '').trimStart();
  if (t.startsWith('{')) {
    if (/"kind"\s*:\s*"goodput\.step_breakdown"/.test(t)) return 'step-breakdown';
    if (/"(traceEvents|schemaVersion|deviceProperties|distributedInfo)"\s*:/.test(t)) return 'pytorch-trace';
    return undefined;
  }
  if (t.startsWith('[')) {
    if (looksLikeHorovodTimeline(t)) return 'horovod-timeline';
    if (/"data_wait_s"\s*:/.test(t) && /"forward_backward_s"\s*:/.test(t)) return 'step-breakdown';
    // Not JSON after all: launcher-prefixed logs ("[1,0]<stdout>:", "[default0]:") start with "[" too.
  }
  if (/^<\?xml|^<!DOCTYPE nvidia_smi_log|^<nvidia_smi_log/.test(t) || /<nvidia_smi_log>/.test(t.slice(0, 2000))) return 'nvidia-smi-xml';
  if (/^#{20,}\s*$/m.test(t) && /^#\s*\S.*::.*$/m.test(t) && /^#\s*\$\s*nvidia-smi/m.test(t)) return 'nvidia-smi-capture';
  // Log lines, not prose that merely mentions NCCL: `host:pid:tid [dev] NCCL INFO`, `NCCL version 2.x`, nccl-tests summary.
  if (/^.*\S+:\d+:\d+ \[\d+\] NCCL (INFO|WARN)/m.test(t) || /^(\[[^\]]*\]\S*:)?NCCL version \d/m.test(t) || /^(\[[^\]]*\]\S*:)?#\s*Avg bus bandwidth/m.test(t)) return 'nccl-log';
  if (/==+NVSMI LOG==+/.test(t)) return 'nvidia-smi-query';
  // eslint-disable-next-line no-control-regex -- topo -m underlines its header with ANSI escapes
  if (/^\s*(\x1b\[[0-9;]*m)*GPU0(\x1b\[[0-9;]*m)?\s+(GPU1|CPU Affinity|NIC0|mlx|X\b)/m.test(t) || (/^GPU0\s+X\b/m.test(t) && /Legend:/.test(t))) return 'nvidia-smi-topo';
  if (/^#\s*gpu\s+\S+/im.test(t)) return 'nvidia-smi-monitor';
  const first = t.split(/\r?\n/, 1)[0] ?? '';
  if (/(utilization\.gpu|memory\.used|memory\.total|power\.draw|temperature\.gpu|clocks\.|pci\.bus_id|\bname\b.*,)/i.test(first) && first.includes(',')) return 'nvidia-smi-csv';
  if (first.includes(',') && /\d+\s*(%|MiB|W)\s*(,|$)/.test(first)) return 'nvidia-smi-csv';
  if (first.includes(',') && first.split(',').length === 4 && first.split(',').every((c) => /^\s*\d+(\.\d+)?\s*$/.test(c))) return 'nvidia-smi-csv';
  return undefined;
}
