import { usageError } from '../../core/errors.js';
import { flagNames, parseFlags, type CliCommand } from '../command.js';
import type { CommandEntry } from '../commands.js';
import { completionScript, type CompletionCommand } from '../completion-script.js';
import { didYouMean } from '../../util/suggest.js';

/** Flags a command accepts: its declared options, else those its help text lists. */
function flagsOf(c: CliCommand): string[] {
  const listed = [...c.help.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*|-[A-Za-z])(?=[\s,=\]|]|$)/g)].map((m) => m[1]!);
  return [...new Set([...(c.options ? flagNames(c.options) : []), ...listed, '--help'])].sort();
}

/** `goodput completion` needs every command, loaded; the command list hands them in. */
export function makeCompletionCommand(
  all: () => Promise<readonly { entry: CommandEntry; command: CliCommand }[]>,
): CliCommand {
  return {
    name: 'completion',
    help: `Usage: goodput completion bash|zsh

Prints a script that completes goodput's commands and flags (files after '--').
  bash:  source <(goodput completion bash)        # or save it under /etc/bash_completion.d/
  zsh:   source <(goodput completion zsh)         # after compinit; or save it as _goodput
                                                  # in a directory of $fpath`,
    async run(argv) {
      const { positionals } = parseFlags('completion', argv, {});
      const shell = positionals[0];
      if (positionals.length !== 1 || (shell !== 'bash' && shell !== 'zsh')) {
        throw usageError(
          `completion: expected 'bash' or 'zsh'.${shell === undefined ? '' : didYouMean(shell, ['bash', 'zsh'])} See 'goodput completion --help'.`,
        );
      }
      const commands: CompletionCommand[] = (await all()).map(({ entry, command }) => ({
        name: entry.name,
        summary: entry.summary,
        flags: flagsOf(command),
      }));
      process.stdout.write(completionScript(shell, commands));
      return 0;
    },
  };
}
