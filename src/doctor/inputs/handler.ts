/**
 * The doctor's inputs as a table of handlers (inputs/table.ts): each kind of input says how it is
 * recognised, parsed, turned into findings and summarized into the report, so adding an input is
 * adding a row, not a branch.
 */
import { stat } from 'node:fs/promises';
import type { Finding } from '../findings/finding.js';
import { readAllText } from '../io/read-files.js';
import type { KinetoRank } from '../parse/kineto/kineto-collector.js';
import type { StepRecord } from '../parse/step-breakdown.js';
import type { DoctorReport, InputKind, NcclSummary } from '../report/model.js';

/** Non-trace inputs are read whole; beyond this size they are skipped with a warning. */
export const MAX_TEXT_INPUT_BYTES = 256 * 1024 * 1024;

/** One input file; `group` is the directory it was found in (a multi-rank run), else itself. */
export interface InputFile {
  path: string;
  group: string;
}

/** What the handlers add to the report while the inputs are read (in input order). */
export interface ReportParts {
  findings: Finding[];
  /** Kineto ranks by group, analysed per run once every input is read. */
  trace_groups: Map<string, KinetoRank[]>;
  gpus: DoctorReport['gpus'];
  gpu_samples: DoctorReport['gpu_samples'];
  topology: DoctorReport['topology'];
  nccl: NcclSummary[];
  horovod: DoctorReport['horovod'];
  steps: StepRecord[];
}

/** A recognised input that is not analysed, with the warning that says why. */
export interface Skip {
  skip: string;
}

/** How one kind of input is handled. `parse` may throw: the input is then skipped with a warning. */
export interface InputHandler<Parsed> {
  readonly kind: InputKind;
  /**
   * Whether a file starting with `head` (BOM and leading blanks removed) is this input; the table
   * asks its rows in order and the first that says yes wins. Never looks at the file name.
   */
  detect(head: string): boolean;
  /** Reads the file; `warn` records a warning and the input is still analysed. */
  parse(file: InputFile, warn: (warning: string) => void): Promise<Parsed | Skip>;
  findings(parsed: Parsed, file: InputFile): Finding[];
  summarize(parsed: Parsed, file: InputFile, parts: ReportParts): void;
}

/** A table row: a handler with its parsed type hidden. */
export interface InputRow {
  readonly kind: InputKind;
  detect(head: string): boolean;
  /** Parses, adds findings and summaries to `parts`; false (with a warning) when skipped. */
  handle(file: InputFile, parts: ReportParts, warn: (warning: string) => void): Promise<boolean>;
}

function isSkip(value: unknown): value is Skip {
  return typeof value === 'object' && value !== null && 'skip' in value;
}

/** Makes a table row of a handler. */
export function inputRow<Parsed>(handler: InputHandler<Parsed>): InputRow {
  return {
    kind: handler.kind,
    detect: (head) => handler.detect(head),
    async handle(file, parts, warn) {
      const parsed = await handler.parse(file, warn);
      if (isSkip(parsed)) {
        warn(parsed.skip);
        return false;
      }
      parts.findings.push(...handler.findings(parsed, file));
      handler.summarize(parsed, file, parts);
      return true;
    },
  };
}

/** Reads a text input whole, or skips it when larger than MAX_TEXT_INPUT_BYTES. */
export async function readTextInput(file: InputFile, kind: InputKind): Promise<string | Skip> {
  if ((await stat(file.path)).size > MAX_TEXT_INPUT_BYTES) {
    return { skip: `${file.path}: ${kind} input larger than ${MAX_TEXT_INPUT_BYTES / 2 ** 20} MiB; skipped` };
  }
  return readAllText(file.path);
}

/** Detection helper: the text formats never start with a JSON object. */
export function notJsonObject(test: (head: string) => boolean): (head: string) => boolean {
  return (head) => !head.startsWith('{') && test(head);
}
