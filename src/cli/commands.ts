import type { CliCommand } from './command.js';

/** Every `goodput` subcommand, in the order `goodput --help` lists them. */
export const commands: readonly CliCommand[] = [];
