import type { CliCommand } from './command.js';

/**
 * One `goodput <name>` subcommand as the command list knows it: its name and its line for
 * `goodput --help`, and the module that implements it, imported only when the command runs (a
 * call then reads one command's code instead of all of them: the server, the simulator and the
 * doctor are most of the CLI's start-up time).
 */
export interface CommandEntry {
  readonly name: string;
  /** One line for `goodput --help` and shell completion. */
  readonly summary: string;
  load(): Promise<CliCommand>;
}

/** Every command, loaded (shell completion lists every command's flags). */
function loadAll(): Promise<{ entry: CommandEntry; command: CliCommand }[]> {
  return Promise.all(commands.map(async (entry) => ({ entry, command: await entry.load() })));
}

/** Every `goodput` subcommand, in the order `goodput --help` lists them. */
export const commands: readonly CommandEntry[] = [
  {
    name: 'up',
    summary: 'Start the goodput server (control plane) on this machine',
    load: async () => (await import('./commands/up.js')).upCommand,
  },
  {
    name: 'down',
    summary: "Stop the goodput server of a data directory (e.g. one started by 'goodput up --detach')",
    load: async () => (await import('./commands/down.js')).downCommand,
  },
  {
    name: 'submit',
    summary: 'Submit a job to the goodput server',
    load: async () => (await import('./commands/submit.js')).submitCommand,
  },
  {
    name: 'ls',
    summary: 'List jobs on the goodput server',
    load: async () => (await import('./commands/ls.js')).lsCommand,
  },
  {
    name: 'show',
    summary: 'Show a job: state, batch, goodput and speedup, replicas, and recent events with their reasons',
    load: async () => (await import('./commands/show.js')).showCommand,
  },
  {
    name: 'logs',
    summary: "Print a replica's log (-f to follow)",
    load: async () => (await import('./commands/logs.js')).logsCommand,
  },
  {
    name: 'cancel',
    summary: 'Cancel a job (SIGTERM to its replicas, SIGKILL after the grace period)',
    load: async () => (await import('./commands/cancel.js')).cancelCommand,
  },
  {
    name: 'nodes',
    summary: 'List nodes and devices (with their GPU type) and the job holding each',
    load: async () => (await import('./commands/nodes.js')).nodesCommand,
  },
  {
    name: 'shares',
    summary: "Each team's quota, use, borrowed and lent devices, fair-share factor and decayed usage",
    load: async () => (await import('./commands/shares.js')).sharesCommand,
  },
  {
    name: 'usage',
    summary: 'Device-hours per user, team and GPU type over a period',
    load: async () => (await import('./commands/shares.js')).usageCommand,
  },
  {
    name: 'dashboard',
    summary: 'Print (or open) a login link to the web dashboard',
    load: async () => (await import('./commands/dashboard.js')).dashboardCommand,
  },
  {
    name: 'profiles',
    summary: 'List profile keys and what their jobs measured (the model a new job of the key starts from)',
    load: async () => (await import('./commands/profiles.js')).profilesCommand,
  },
  {
    name: 'token',
    summary: 'Create, list and revoke API tokens',
    load: async () => (await import('./commands/token.js')).tokenCommand,
  },
  {
    name: 'backup',
    summary: "Copy the server's store to a file (online: the server keeps serving)",
    load: async () => (await import('./commands/backup.js')).backupCommand,
  },
  {
    name: 'restore',
    summary: 'Replace the store with a backup (the server must be stopped)',
    load: async () => (await import('./commands/backup.js')).restoreCommand,
  },
  {
    name: 'run',
    summary: 'Supervise one elastic job on this machine (no separate server)',
    load: async () => (await import('./commands/run.js')).runCommand,
  },
  {
    name: 'profile',
    summary: "Measure a training script's scaling on the devices at hand, for goodput plan",
    load: async () => (await import('./commands/profile.js')).profileCommand,
  },
  {
    name: 'plan',
    summary: 'Predict time, memory and cost of a profiled job on any GPU count and type',
    load: async () => (await import('./commands/plan.js')).planCommand,
  },
  {
    name: 'sim',
    summary: 'Simulate a scheduling policy on a workload trace and report job completion times',
    load: async () => (await import('./commands/sim.js')).simCommand,
  },
  {
    name: 'compare',
    summary: 'Compare scheduling policies on the same workload trace(s) in simulation',
    load: async () => (await import('./commands/compare.js')).compareCommand,
  },
  {
    name: 'view',
    summary: 'Open recorded simulations (goodput sim --out) in the web dashboard',
    load: async () => (await import('./commands/view.js')).viewCommand,
  },
  {
    name: 'doctor',
    summary: 'Diagnose what limits a training run from traces, nvidia-smi, NCCL and Horovod logs',
    load: async () => (await import('./commands/doctor.js')).doctorCommand,
  },
  {
    name: 'completion',
    summary: 'Print a shell completion script (bash or zsh)',
    load: async () => (await import('./commands/completion.js')).makeCompletionCommand(loadAll),
  },
];
