#!/usr/bin/env node
import { GoodputError } from '../core/errors.js';
import { commands } from './commands.js';
import { didYouMean } from '../util/suggest.js';
import { terminalText } from '../util/printable.js';

const version = '0.1.0';

function topLevelHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4);
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'goodput: goodput-optimizing scheduling, simulation and diagnosis for deep-learning training',
    '',
    'Usage: goodput <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Options: -h, --help   this text;  -V, --version   the version',
    "Run 'goodput <command> --help' for a command's options; 'goodput completion bash|zsh' for shell completion.",
  ].join('\n');
}

/** Runs the CLI and returns its exit status; errors meant for users never print a stack. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(topLevelHelp());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    console.log(version);
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      commands.map((c) => c.name),
    );
    console.error(`goodput: error[E_USAGE]: unknown command '${name}'.${hint} Run 'goodput --help' for the list.`);
    return 2;
  }
  const command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    const dashDash = rest.indexOf('--');
    const helpIndex = Math.max(rest.indexOf('--help'), rest.indexOf('-h'));
    if (dashDash === -1 || helpIndex < dashDash) {
      console.log(command.help);
      return 0;
    }
  }
  try {
    return await command.run(rest);
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof GoodputError) {
    // Messages may quote what a job or another user wrote (a name, a reason): no escapes reach the terminal.
    console.error(`goodput: error[${error.code}]: ${terminalText(error.message, true)}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  console.error(`goodput: internal error: ${terminalText(message, true)}`);
  if (process.env.GOODPUT_DEBUG && error instanceof Error) console.error(error.stack);
  else console.error('Set GOODPUT_DEBUG=1 for details, and please report this as a bug.');
  return 70;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.exitCode = reportError(error);
  },
);
