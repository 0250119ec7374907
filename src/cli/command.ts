import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from '../core/errors.js';
import { didYouMean } from '../util/suggest.js';

/** One `goodput <name>` subcommand (its summary is in commands.ts). `run` returns the process exit status. */
export interface CliCommand {
  readonly name: string;
  /** Full text for `goodput <name> --help`. */
  readonly help: string;
  /** Its flags, where declared (shell completion also reads the flags its help lists). */
  readonly options?: Options;
  run(argv: readonly string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses flags strictly; an unknown flag or a missing value becomes a usage error that names the
 * command, instead of a Node stack trace.
 */
export function parseFlags<T extends Options>(
  command: string,
  argv: readonly string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node words a value that starts with '-' (e.g. `--seed -1`) as an ambiguous option over 3 lines.
    const ambiguous = /^Option '([^']+)' argument is ambiguous/.exec(message);
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    const why = ambiguous
      ? `option '${ambiguous[1]}' got a value starting with '-'; write it as ${ambiguous[1]}=VALUE`
      : message.replace(/\. To specify .*$/s, '').replace(/\s*\n\s*/g, ' ');
    const hint = unknown ? didYouMean(unknown[1]!, flagNames(options)) : '';
    throw usageError(`${command}: ${why}.${hint} See 'goodput ${command} --help'.`);
  }
}

/** Every spelling of the flags in `options`: `--long` and `-s`. */
export function flagNames(options: Options): string[] {
  return Object.entries(options).flatMap(([long, o]) => [`--${long}`, ...(o.short ? [`-${o.short}`] : [])]);
}

/** Parses a numeric flag value, rejecting garbage with a message naming the flag. */
export function numberFlag(
  command: string,
  flag: string,
  value: string | undefined,
  fallback: number,
  opts: { integer?: boolean; min?: number; max?: number; source?: string } = {},
): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (
    value.trim() === '' ||
    !Number.isFinite(parsed) ||
    (opts.integer && !Number.isInteger(parsed)) ||
    (opts.min !== undefined && parsed < opts.min) ||
    (opts.max !== undefined && parsed > opts.max)
  ) {
    const kind = opts.integer ? 'an integer' : 'a number';
    const bound =
      opts.min !== undefined && opts.max !== undefined
        ? ` from ${opts.min} to ${opts.max}`
        : opts.min !== undefined
          ? ` >= ${opts.min}`
          : opts.max !== undefined
            ? ` <= ${opts.max}`
            : '';
    throw usageError(`${command}: ${opts.source ?? `--${flag}`} must be ${kind}${bound}, got '${value}'.`);
  }
  return parsed;
}

/** numberFlag's options for a TCP port (0: any free port). */
export const PORT = { integer: true, min: 0, max: 65535 } as const;
