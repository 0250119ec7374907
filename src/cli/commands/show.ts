import { connect, connectionFlags } from '../../client/connect.js';
import { formatTable } from '../../client/table.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

export const showCommand: CliCommand = {
  name: 'show',
  summary: 'Show a job: state, placement, replicas, model and recent events',
  help: `Usage: goodput show <job> [--json] [--data-dir DIR | --server URL] [--token T]

<job> is a job id or name. --json prints the job with its replicas and full event history.`,
  async run(argv) {
    const { values, positionals } = parseFlags('show', argv, { ...connectionFlags, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw usageError("show: expected one job id or name. See 'goodput show --help'.");
    const client = connect(values);
    const job = await client.getJob(positionals[0]!);
    const events = await client.events(job.id);
    if (values.json) {
      console.log(JSON.stringify({ ...job, events }, null, 2));
      return 0;
    }
    const lines = [
      `job        ${job.id} (${job.name}) of ${job.user}`,
      `state      ${job.state}: ${job.reason}`,
      `command    ${JSON.stringify(job.spec.command)} in ${job.spec.workdir}`,
      `replicas   ${job.replicas} (min ${job.spec.min_replicas}, max ${job.spec.max_replicas}) on device(s) ${job.devices.join(',') || '-'}`,
      `restarts   ${job.restarts} (failures ${job.failures} of max ${job.spec.max_restarts})`,
      `progress   step ${job.step}, ${job.samples} samples, ${job.attained_service_gpu_s} GPU-s`,
      `times      submitted ${job.submitted_at}, started ${job.started_at ?? '-'}, finished ${job.finished_at ?? '-'}`,
    ];
    if (job.rejection) lines.push(`waiting    ${job.rejection.code}: ${job.rejection.message}`);
    if (job.perf) lines.push(`perf       ${Object.entries(job.perf).map(([k, v]) => `${k}=${v.toPrecision(3)}`).join(' ')}`);
    if (job.grad) lines.push(`grad       sqr=${job.grad.sqr.toPrecision(3)} var=${job.grad.var.toPrecision(3)}`);
    console.log(lines.join('\n'));
    if (job.current_replicas.length > 0) {
      console.log('\n' + formatTable(['attempt', 'rank', 'node', 'device', 'pid/job', 'exit'], job.current_replicas.map((r) => [String(r.attempt), String(r.rank), r.node, String(r.device ?? '-'), r.launch_id ? `slurm ${r.launch_id}` : String(r.pid), r.exit_code === null ? 'running' : String(r.exit_code)])));
    }
    console.log('\n' + formatTable(['time', 'actor', 'event', 'state', 'reason'], events.slice(-15).map((e) => [e.at, e.actor, e.kind, `${e.from_state ?? ''}->${e.to_state ?? ''}`, e.reason])));
    return 0;
  },
};
