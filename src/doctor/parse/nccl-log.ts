/** One `Channel NN : a[bus] -> b[bus] [send] via TRANSPORT` connection line. */
export interface NcclConnection {
  readonly channel: number;
  readonly from: number;
  readonly to: number;
  /** Transport family: "P2P/IPC", "P2P/direct", "SHM", "NET/IB", "NET/Socket", "NET/AWS Libfabric", ... */
  readonly transport: string;
  readonly gdrdma: boolean;
}

/** A known NCCL failure or warning recognised in the log. */
export interface NcclIssue {
  /** Stable id, e.g. "shm-too-small", "no-socket-interface", "ib-error", "watchdog-timeout". */
  readonly id: string;
  readonly line: number;
  readonly text: string;
}

/** One row of an nccl-tests result table (out-of-place and in-place). */
export interface NcclTestRow {
  readonly size_bytes: number;
  readonly count: number;
  readonly type: string;
  readonly redop: string;
  readonly time_us: number;
  readonly algbw_gbps: number;
  readonly busbw_gbps: number;
  readonly inplace_time_us: number;
  readonly inplace_algbw_gbps: number;
  readonly inplace_busbw_gbps: number;
}

/** Everything recognised in an NCCL_DEBUG=INFO log (optionally with nccl-tests output). */
export interface NcclLog {
  version?: string;
  /** Network plugin chosen: "IB", "Socket", "AWS Libfabric", ... */
  network?: string;
  ofi_provider?: string;
  bootstrap_interface?: string;
  nranks?: number;
  /** Rank → host name, from `comm ... rank R nranks N` lines and nccl-tests device lists. */
  readonly rank_host: Map<number, string>;
  readonly connections: NcclConnection[];
  /** Connection count per transport family. */
  readonly transports: Record<string, number>;
  ring_channels: number;
  tree_lines: number;
  readonly issues: NcclIssue[];
  readonly warnings: string[];
  readonly test_rows: NcclTestRow[];
  avg_bus_bandwidth_gbps?: number;
}

const KNOWN: readonly { id: string; re: RegExp }[] = [
  { id: 'shm-too-small', re: /\/dev\/shm|shared memory segment|No space left on device|shm_open|posix_fallocate/i },
  {
    id: 'no-socket-interface',
    re: /no socket interface found|Bootstrap\s*:\s*no socket interface|NET\/Socket\s*:\s*no interface found|could not find interface/i,
  },
  {
    id: 'ib-error',
    re: /NET\/IB\s*:.*(error|fail)|ibv_\w+ failed|IBV_WC_\w+|Got completion .*with error|NET\/IB : No device found/i,
  },
  {
    id: 'watchdog-timeout',
    re: /Watchdog caught collective operation timeout|watchdog.*timed? ?out|NCCL timeout|Timeout waiting for/i,
  },
  { id: 'connection-refused', re: /Connection refused|Connection reset by peer|connect returned/i },
  {
    id: 'system-error',
    re: /unhandled system error|unhandled cuda error|remote process exited or there was a network error/i,
  },
];

function transportFamily(via: string): string {
  const parts = via.split('/');
  if (parts[0] === 'NET' || parts[0] === 'COLLNET') return `${parts[0]}/${parts[1] ?? '?'}`;
  if (parts[0] === 'P2P') {
    const kind = (parts[1] ?? '').toLowerCase();
    return kind.startsWith('direct') ? 'P2P/direct' : `P2P/${parts[1] ?? '?'}`;
  }
  return parts[0] ?? via;
}

/** Removes launcher prefixes such as `[1,3]<stdout>:` (mpirun) or `[default0]:` / `[rank0]:` (torchrun). */
export function stripLauncherPrefix(line: string): string {
  return line
    .replace(/^\[\d+,\d+\]<std(?:out|err)>:/, '')
    .replace(/^\[(?:default|rank)\d+\]:/, '')
    .replace(/^\d+:\s(?=\S)/, '');
}

/** Pure, line by line; unknown lines are ignored. */
export function parseNcclLog(text: string): NcclLog {
  const log: NcclLog = {
    rank_host: new Map(),
    connections: [],
    transports: {},
    ring_channels: 0,
    tree_lines: 0,
    issues: [],
    warnings: [],
    test_rows: [],
  };
  const ringsSeen = new Set<string>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = stripLauncherPrefix(raw);
    const hostPrefix = /^\s*([^\s:]+):\d+:\d+ \[\d+\] NCCL (INFO|WARN)/.exec(line);
    let m: RegExpExecArray | null;
    if ((m = /NCCL version ([\w.+-]+)/.exec(line))) log.version ??= m[1];
    if ((m = /NCCL INFO Using network (.+?)\s*$/.exec(line))) log.network ??= m[1];
    if ((m = /NET\/OFI Selected Provider is (\S+)/.exec(line))) log.ofi_provider ??= m[1];
    if ((m = /Bootstrap : Using (\w[\w.-]*):/.exec(line))) log.bootstrap_interface ??= m[1];
    if ((m = /comm 0x[0-9a-f]+ rank (\d+) nranks (\d+)/.exec(line))) {
      log.nranks ??= Number(m[2]);
      if (hostPrefix) log.rank_host.set(Number(m[1]), hostPrefix[1]!);
    }
    if ((m = /#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)/.exec(line)))
      log.rank_host.set(Number(m[1]), m[2]!);
    // "Channel 00/0 : 0[1000] -> 1[2000] [send] via NET/IB/0/GDRDMA", older "Ring 01 : 16 -> 0 [send] via NET/IB/0"
    if (
      (m =
        /(?:Channel|Ring) (\d+)(?:\/\d+)? : (\d+)(?:\[[^\]]*\])? -> (\d+)(?:\[[^\]]*\])?(?: \[(?:send|receive|recv)\])? via (\S+(?: \S+)*?)\s*$/.exec(
          line,
        ))
    ) {
      const via = m[4]!;
      const family = transportFamily(via);
      log.connections.push({
        channel: Number(m[1]),
        from: Number(m[2]),
        to: Number(m[3]),
        transport: family,
        gdrdma: /GDRDMA/.test(via),
      });
      log.transports[family] = (log.transports[family] ?? 0) + 1;
    } else if ((m = /NCCL INFO (?:Channel|Ring) (\d+)(?:\/\d+)?\s*:\s+[\d ]+$/.exec(line))) {
      if (!ringsSeen.has(m[1]!)) {
        ringsSeen.add(m[1]!);
        log.ring_channels++;
      }
    }
    if (/NCCL INFO Trees /.test(line)) log.tree_lines++;
    if (/NCCL WARN/.test(line)) log.warnings.push(line.slice(line.indexOf('NCCL WARN') + 10).trim());
    for (const k of KNOWN) {
      if (
        k.re.test(line) &&
        /NCCL (WARN|INFO)|Error|error|Watchdog|timeout/i.test(line) &&
        !/Setting NCCL_TOPO_FILE/.test(line)
      ) {
        if (!log.issues.some((x) => x.id === k.id))
          log.issues.push({ id: k.id, line: i + 1, text: line.trim().slice(0, 300) });
      }
    }
    if ((m = /#\s*Avg bus bandwidth\s*:\s*([\d.]+)/.exec(line))) log.avg_bus_bandwidth_gbps = Number(m[1]);
    const row =
      /^\s+(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(?:-?\d+\s+)?([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$/.exec(
        line,
      );
    if (row && !hostPrefix) {
      log.test_rows.push({
        size_bytes: Number(row[1]),
        count: Number(row[2]),
        type: row[3]!,
        redop: row[4]!,
        time_us: Number(row[5]),
        algbw_gbps: Number(row[6]),
        busbw_gbps: Number(row[7]),
        inplace_time_us: Number(row[9]),
        inplace_algbw_gbps: Number(row[10]),
        inplace_busbw_gbps: Number(row[11]),
      });
    }
  });
  return log;
}
