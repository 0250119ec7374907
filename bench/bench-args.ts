/**
 * Flags of a benchmark script: `--help` prints its usage, a bad flag prints what is wrong and the
 * usage (exit 2) instead of a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { goodputPolicy } from '../src/policy/goodput/index.js';
import { parsePolicyParams } from '../src/policy/policy-params.js';
import type { PolicyParamValue } from '../src/policy/policy.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A `--name VALUE` flag with its default, for benchArgs. */
export function textFlag<const D extends string>(value: D): { type: 'string'; default: D } {
  return { type: 'string', default: value };
}

/** A `--name` switch, off unless given, for benchArgs. */
export function switchFlag(): { type: 'boolean'; default: false } {
  return { type: 'boolean', default: false };
}

/** The parsed flags of `options`; exits the process on `--help` (0) or a bad flag (2). */
export function benchArgs<const O extends Options>(
  usage: string,
  options: O,
): ReturnType<typeof parseArgs<{ options: O; strict: true }>>['values'] {
  const text = usage.trim();
  if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
    console.log(text);
    process.exit(0);
  }
  try {
    return parseArgs({ options, strict: true }).values;
  } catch (error) {
    console.error(`error: ${(error as Error).message}\n\n${text}`);
    process.exit(2);
  }
}

/** `text` (the value of `--flag`) as a whole number >= 1; anything else prints one line naming the flag and exits 2. */
export function positiveIntOrExit(text: string, flag: string): number {
  const n = Number(text);
  if (Number.isInteger(n) && n >= 1) return n;
  console.error(`error: --${flag} must be a whole number >= 1, not '${text}'`);
  process.exit(2);
}

/**
 * The goodput policy's knobs from `assignments` (`NAME=VALUE`), validated as `goodput sim
 * --policy-param` does; a bad one prints one line naming `flag` and exits 2.
 */
export function goodputParamsOrExit(assignments: readonly string[], flag: string): Record<string, PolicyParamValue> {
  try {
    return parsePolicyParams(goodputPolicy, assignments, flag);
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    process.exit(2);
  }
}
