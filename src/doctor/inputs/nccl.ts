/** NCCL debug logs and nccl-tests output. */
import { ncclFindings } from '../findings/comm-findings.js';
import { parseNcclLog, type NcclLog } from '../parse/nccl-log.js';
import { inputRow, notJsonObject, readTextInput } from './handler.js';

export const ncclInput = inputRow<NcclLog>({
  kind: 'nccl-log',
  // Log lines, not prose that merely mentions NCCL: `host:pid:tid [dev] NCCL INFO`, `NCCL version 2.x`, nccl-tests summary.
  detect: notJsonObject(
    (head) =>
      /^.*\S+:\d+:\d+ \[\d+\] NCCL (INFO|WARN)/m.test(head) ||
      /^(\[[^\]]*\]\S*:)?NCCL version \d/m.test(head) ||
      /^(\[[^\]]*\]\S*:)?#\s*Avg bus bandwidth/m.test(head),
  ),
  async parse(file) {
    const text = await readTextInput(file, 'nccl-log');
    return typeof text === 'string' ? parseNcclLog(text) : text;
  },
  findings: (log, file) => ncclFindings(log, file.path),
  summarize(log, file, parts) {
    const peak = log.test_rows.reduce((m, r) => Math.max(m, r.busbw_gbps, r.inplace_busbw_gbps), 0);
    parts.nccl.push({
      file: file.path,
      version: log.version ?? null,
      network: log.network ?? null,
      nranks: log.nranks ?? null,
      nodes: new Set(log.rank_host.values()).size,
      transports: log.transports,
      gdrdma_connections: log.connections.filter((c) => c.gdrdma).length,
      ring_channels: log.ring_channels,
      avg_bus_bandwidth_gbps: log.avg_bus_bandwidth_gbps ?? null,
      peak_bus_bandwidth_gbps: log.test_rows.length ? peak : null,
      issues: log.issues.map((i) => i.id),
      warnings: log.warnings.slice(0, 20),
    });
  },
});
