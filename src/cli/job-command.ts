/**
 * Checks of the job command a user types after `--`, with the fix in the message: the command
 * forgotten behind a missing `--`, or a whole command line quoted into one argument.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from '../core/errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

const SPEC_FILE = /\.(ya?ml|json)$/i;

/**
 * Throws a usage error with the corrected command line when the words before `--` hold a
 * program rather than a spec file (`goodput submit python3 train.py`): the first positional
 * that is not the one .yaml/.yml/.json spec file starts the command. Unknown flags after it (the program's
 * own, e.g. `--epochs`) do not hide the hint; an unknown flag before it is left to the strict
 * parse (it says "did you mean").
 */
export function checkMissingDashDash(
  cmd: string,
  flagArgs: readonly string[],
  options: Options,
  specAllowed: boolean,
): void {
  const { tokens } = parseArgs({ args: [...flagArgs], options, strict: false, allowPositionals: true, tokens: true });
  const positionals = tokens.filter((t) => t.kind === 'positional');
  const specFirst = specAllowed && positionals[0] !== undefined && SPEC_FILE.test(positionals[0].value);
  const first = specFirst ? positionals[1] : positionals[0];
  // An unknown flag before it (a typo, `--max-replica 3`) is reported by the strict parse instead.
  const typo = tokens.some((t) => t.kind === 'option' && !(t.name in options) && (!first || t.index < first.index));
  if (!first || typo) return;
  const before = flagArgs.slice(0, first.index);
  const suggestion = ['goodput', cmd, ...before, '--', ...flagArgs.slice(first.index)].map(shellWord).join(' ');
  const what = specAllowed && !specFirst ? 'is not a job spec file (.yaml, .yml or .json)' : 'is not an option';
  throw usageError(
    `${cmd}: '${first.value}' ${what}. A command to run goes after '--'; did you mean \`${suggestion}\`?`,
  );
}

/**
 * Refuses a command given as one argument holding spaces (`-- "python3 train.py"`): it would run
 * a program of that name, which fails with 127. Allowed when a file of that name exists in the
 * workdir (a program whose path has spaces).
 */
export function checkQuotedCommand(cmd: string, command: readonly string[], workdir: string): void {
  const program = command[0];
  if (
    command.length !== 1 ||
    program === undefined ||
    !/\s/.test(program.trim()) ||
    existsSync(resolve(workdir, program))
  )
    return;
  const words = program.trim().split(/\s+/);
  throw usageError(
    `${cmd}: the command is one argument, '${program}'. Arguments are passed literally, never ` +
      `through a shell, so this would run a program named '${program}'. ` +
      `Write the words unquoted: -- ${words.map(shellWord).join(' ')} (or, for shell syntax, -- sh -c ${shellWord(program)}).`,
  );
}

/** A word as a POSIX shell would need it quoted to read it back as one argument. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
