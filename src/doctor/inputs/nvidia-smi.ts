/** The nvidia-smi outputs: one handler per format, sharing the GPU summary and findings. */
import { nvidiaSmiFindings } from '../findings/smi-findings.js';
import { parseCapture, parseNvidiaSmiOutput, type NvidiaSmiData } from '../parse/nvidia-smi/capture.js';
import type { InputKind } from '../report/model.js';
import { summarizeGpus } from '../summarize-gpus.js';
import { inputRow, notJsonObject, readTextInput, type InputRow } from './handler.js';

/** The command whose output each plain format is (a capture names its commands itself). */
const SMI_COMMAND: Partial<Record<InputKind, string>> = {
  'nvidia-smi-csv': 'nvidia-smi --query-gpu',
  'nvidia-smi-xml': 'nvidia-smi -q -x',
  'nvidia-smi-query': 'nvidia-smi -q',
  'nvidia-smi-topo': 'nvidia-smi topo -m',
  'nvidia-smi-monitor': 'nvidia-smi dmon',
};

function smiInput(kind: InputKind, detect: (head: string) => boolean): InputRow {
  return inputRow<NvidiaSmiData>({
    kind,
    detect: notJsonObject(detect),
    async parse(file) {
      const text = await readTextInput(file, kind);
      if (typeof text !== 'string') return text;
      const data: NvidiaSmiData = kind === 'nvidia-smi-capture' ? parseCapture(text) : { samples: [], processes: [] };
      if (kind !== 'nvidia-smi-capture') parseNvidiaSmiOutput(text, SMI_COMMAND[kind] ?? '', data);
      if (data.samples.length === 0 && !data.topology && data.processes.length === 0)
        return { skip: `${file.path}: looks like ${kind} but no GPU values could be read; skipped` };
      return data;
    },
    findings: (data, file) => nvidiaSmiFindings(data, file.path),
    summarize(data, file, parts) {
      parts.topology ??= data.topology ?? null;
      parts.gpu_samples.push(...data.samples);
      parts.gpus.push(...summarizeGpus(data.samples, file.path));
    },
  });
}

export const smiXmlInput = smiInput(
  'nvidia-smi-xml',
  (head) =>
    /^<\?xml|^<!DOCTYPE nvidia_smi_log|^<nvidia_smi_log/.test(head) || /<nvidia_smi_log>/.test(head.slice(0, 2000)),
);
export const smiCaptureInput = smiInput(
  'nvidia-smi-capture',
  (head) => /^#{20,}\s*$/m.test(head) && /^#\s*\S.*::.*$/m.test(head) && /^#\s*\$\s*nvidia-smi/m.test(head),
);
export const smiQueryInput = smiInput('nvidia-smi-query', (head) => /==+NVSMI LOG==+/.test(head));
export const smiTopoInput = smiInput(
  'nvidia-smi-topo',
  (head) =>
    // eslint-disable-next-line no-control-regex -- topo -m underlines its header with ANSI escapes
    /^\s*(\x1b\[[0-9;]*m)*GPU0(\x1b\[[0-9;]*m)?\s+(GPU1|CPU Affinity|NIC0|mlx|X\b)/m.test(head) ||
    (/^GPU0\s+X\b/m.test(head) && /Legend:/.test(head)),
);
export const smiMonitorInput = smiInput('nvidia-smi-monitor', (head) => /^#\s*gpu\s+\S+/im.test(head));
export const smiCsvInput = smiInput('nvidia-smi-csv', (head) => {
  const first = head.split(/\r?\n/, 1)[0] ?? '';
  if (!first.includes(',')) return false;
  return (
    /(utilization\.gpu|memory\.used|memory\.total|power\.draw|temperature\.gpu|clocks\.|pci\.bus_id|\bname\b.*,)/i.test(
      first,
    ) ||
    /\d+\s*(%|MiB|W)\s*(,|$)/.test(first) ||
    (first.split(',').length === 4 && first.split(',').every((c) => /^\s*\d+(\.\d+)?\s*$/.test(c)))
  );
});
