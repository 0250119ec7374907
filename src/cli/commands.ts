import type { CliCommand } from './command.js';
import { compareCommand } from './commands/compare.js';
import { doctorCommand } from './commands/doctor.js';
import { simCommand } from './commands/sim.js';
import { cancelCommand } from './commands/cancel.js';
import { logsCommand } from './commands/logs.js';
import { lsCommand } from './commands/ls.js';
import { nodesCommand } from './commands/nodes.js';
import { runCommand } from './commands/run.js';
import { showCommand } from './commands/show.js';
import { submitCommand } from './commands/submit.js';
import { upCommand } from './commands/up.js';
import { viewCommand } from './commands/view.js';
import { downCommand } from './commands/down.js';
import { makeCompletionCommand } from './commands/completion.js';
import { backupCommand, restoreCommand } from './commands/backup.js';
import { tokenCommand } from './commands/token.js';
import { profilesCommand } from './commands/profiles.js';
import { profileCommand } from './commands/profile.js';
import { planCommand } from './commands/plan.js';
import { dashboardCommand } from './commands/dashboard.js';
import { sharesCommand, usageCommand } from './commands/shares.js';

/** Every `goodput` subcommand, in the order `goodput --help` lists them. */
export const commands: readonly CliCommand[] = [
  upCommand,
  downCommand,
  submitCommand,
  lsCommand,
  showCommand,
  logsCommand,
  cancelCommand,
  nodesCommand,
  sharesCommand,
  usageCommand,
  dashboardCommand,
  profilesCommand,
  tokenCommand,
  backupCommand,
  restoreCommand,
  runCommand,
  profileCommand,
  planCommand,
  simCommand,
  compareCommand,
  viewCommand,
  doctorCommand,
  makeCompletionCommand(() => commands),
];
