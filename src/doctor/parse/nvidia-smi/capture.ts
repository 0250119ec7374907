import type { GpuSample } from './gpu-sample.js';
import type { ProcessSample } from './monitor.js';
import { parseMonitor } from './monitor.js';
import { parseQueryGpuCsv } from './query-csv.js';
import { parseNvidiaSmiQueryText } from './query-text.js';
import type { Topology } from './topo.js';
import { parseTopoMatrix } from './topo.js';
import { parseNvidiaSmiXml } from './xml.js';

/** Everything read from nvidia-smi outputs of one input file. */
export interface NvidiaSmiData {
  readonly samples: GpuSample[];
  readonly processes: ProcessSample[];
  topology?: Topology;
  driver_version?: string;
  cuda_version?: string;
}

/** One `# <state> :: <what>` / `# $ <command>` section of a capture. */
export interface CaptureSection {
  readonly state: string;
  readonly what: string;
  readonly command: string;
  readonly body: string;
}

const RULE = /^#{20,}\s*$/;

/** Splits a whole-capture file into its sections (the untitled preamble is skipped). Pure. */
export function splitCapture(text: string): CaptureSection[] {
  const lines = text.split(/\r?\n/);
  const out: CaptureSection[] = [];
  let i = 0;
  while (i < lines.length) {
    if (RULE.test(lines[i]!) && i + 1 < lines.length) {
      const title = /^#\s*(.+?)\s*::\s*(.+?)\s*$/.exec(lines[i + 1]!);
      if (title) {
        let j = i + 2;
        let command = '';
        while (j < lines.length && !RULE.test(lines[j]!)) {
          const cmd = /^#\s*\$\s*(.*)$/.exec(lines[j]!);
          if (cmd) command = cmd[1]!.trim();
          j++;
        }
        const start = j + 1;
        let end = start;
        while (end < lines.length && !(RULE.test(lines[end]!) && end + 1 < lines.length && /::/.test(lines[end + 1]!)))
          end++;
        out.push({ state: title[1]!, what: title[2]!, command, body: lines.slice(start, end).join('\n') });
        i = end;
        continue;
      }
    }
    i++;
  }
  return out;
}

/** Parses one nvidia-smi output given the command that produced it (when known). Pure. */
export function parseNvidiaSmiOutput(body: string, command: string, into: NvidiaSmiData, state?: string): void {
  const tag = (samples: GpuSample[]) => {
    for (const s of samples) {
      if (state) s.state = state;
      into.samples.push(s);
    }
  };
  const query = /--query-gpu(?:=(\S+))?/.exec(command);
  if (query) {
    tag(parseQueryGpuCsv(body, query[1]?.split(',')));
  } else if (
    (/\s-q\b/.test(command) && /\s-x\b|--xml/.test(command)) ||
    /^\s*(<\?xml|<!DOCTYPE nvidia_smi_log|<nvidia_smi_log)/.test(body)
  ) {
    const x = parseNvidiaSmiXml(body);
    into.driver_version ??= x.driver_version;
    into.cuda_version ??= x.cuda_version;
    tag(x.gpus);
  } else if (/\s-q\b|--query(\s|$)/.test(command) || /==NVSMI LOG==/.test(body)) {
    const q = parseNvidiaSmiQueryText(body);
    into.driver_version ??= q.driver_version;
    into.cuda_version ??= q.cuda_version;
    tag(q.gpus);
  } else if (/\btopo\b/.test(command)) {
    into.topology ??= parseTopoMatrix(body);
  } else if (/\b(dmon|pmon)\b/.test(command)) {
    const m = parseMonitor(body);
    if (m) {
      tag(m.samples.map((s) => ({ ...s, source: m.kind })));
      into.processes.push(...m.processes);
    }
  }
}

/** Parses a sectioned capture (`# idle :: query (-q)` / `# $ nvidia-smi -q` ...). Pure. */
export function parseCapture(text: string): NvidiaSmiData {
  const data: NvidiaSmiData = { samples: [], processes: [] };
  for (const s of splitCapture(text)) {
    if (s.state === 'capabilities' && !/\btopo\b/.test(s.command)) continue;
    parseNvidiaSmiOutput(s.body, s.command, data, s.state === 'capabilities' ? undefined : s.state);
  }
  return data;
}
