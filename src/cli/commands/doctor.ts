import { existsSync } from 'node:fs';
import { connect, connectionFlags } from '../../client/connect.js';
import { writeOutputFile } from '../../datadir/output-file.js';
import { liveDoctorLine } from '../../doctor/live.js';
import { terminalJson, terminalText } from '../../util/printable.js';
import { rankLines } from '../job-render.js';
import { usageError } from '../../core/errors.js';
import { renderHtml } from '../../doctor/report/html.js';
import { toJson } from '../../doctor/report/json.js';
import { renderText } from '../../doctor/report/text.js';
import { runDoctor } from '../../doctor/run-doctor.js';
import type { CliCommand } from '../command.js';
import { parseFlags } from '../command.js';

const HELP = `Usage: goodput doctor [--json] [--html report.html] <files or directories...>
       goodput doctor [--json] <job> [--data-dir DIR | --server URL] [--token T]

Reads what a training run left behind and prints a diagnosis: where every percent of GPU (or, on
CPU runs, step) time goes (input pipeline, host-side overhead, sync points, collectives, memory
copies, compute), what limits the run, the evidence in numbers and the fix for the largest cause
first. Inputs are recognised by content:
  - PyTorch profiler traces, .json or .json.gz, one per rank (a directory = one run): Kineto
    objects and the legacy bare-array chrome traces of torch 1.x, GPU or CPU-only
  - nvidia-smi: --query-gpu CSV, -q, -q -x, topo -m, dmon/pmon, whole captures
  - Prometheus files of nvidia_gpu_exporter and dcgm-exporter (.metrics, .prom, ...)
  - NCCL_DEBUG=INFO logs (also prefixed by mpirun/torchrun) and nccl-tests output
  - Horovod timelines; goodput SDK step logs (GOODPUT_STEP_LOG)
Unrelated runs given together each get their own verdict.

Given a job id or name (no such file), the running job's live verdicts instead: the step
breakdown of its reports, and across its ranks which one straggles (rank, node, device, slow
phase, cost to the job) or hangs, with its replicas' process state, CPU time and last log line.

Options:
  --json            print one JSON object instead of the text report
  --html <file>     also write a self-contained HTML report with charts
  -h, --help        show this help

Exit status: 0 on success (even with findings), 1 when no input could be analysed ("no usable
input"), 2 on usage errors.`;

/** `goodput doctor <job>`: the live verdicts of a job on a server. */
async function liveDoctor(
  ref: string,
  flags: { server?: string; token?: string; 'data-dir'?: string; json?: boolean },
): Promise<number> {
  const client = connect(flags);
  const job = await client.getJob(ref);
  const ranks = await client.ranks(job.id);
  const reports = await client.reports(job.id, 200);
  if (flags.json) {
    process.stdout.write(terminalJson({ job: job.id, doctor: liveDoctorLine(reports, job), ...ranks }) + '\n');
    return 0;
  }
  const lines = [`job        ${job.id} (${job.name}), ${job.state}`, `doctor     ${liveDoctorLine(reports, job)}`];
  lines.push(...rankLines(ranks));
  for (const p of ranks.processes)
    lines.push(
      `replica ${p.rank}  ${p.state ?? 'state unknown'}${p.cpu_s === null ? '' : `, ${p.cpu_s.toFixed(1)} CPU-s`}` +
        `; last log line: ${p.last_log_line || '-'}`,
    );
  process.stdout.write(lines.map((l) => terminalText(l)).join('\n') + '\n');
  return 0;
}

/** `goodput doctor`: the thin shell around runDoctor (flags, output files, exit status). */
export const doctorCommand: CliCommand = {
  name: 'doctor',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseFlags('doctor', argv, {
      ...connectionFlags,
      json: { type: 'boolean' },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    if (positionals.length === 0)
      throw usageError("doctor: give at least one file or directory. See 'goodput doctor --help'.");
    // A job id or name: one word that names no file (a path has a separator or a suffix).
    const ref = positionals.length === 1 ? positionals[0]! : '';
    if (/^[A-Za-z0-9_-]+$/.test(ref) && !existsSync(ref)) return liveDoctor(ref, values);
    const report = await runDoctor(positionals);
    for (const w of report.warnings) process.stderr.write(`goodput doctor: warning: ${w}\n`);
    if (values.html) writeOutputFile(values.html, renderHtml(report), 'the HTML report', 'pass another --html');
    process.stdout.write(values.json ? JSON.stringify(toJson(report), null, 2) + '\n' : renderText(report));
    // Nothing analysed, or nothing measured in what was read: not a pass for a script gating on it.
    return report.inputs.length === 0 || report.verdict === 'no-data' ? 1 : 0;
  },
};
