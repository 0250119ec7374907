/** Every input the doctor reads, in detection order (the first row whose `detect` says yes wins). */
import type { InputKind } from '../report/model.js';
import type { InputRow } from './handler.js';
import { horovodInput } from './horovod.js';
import { kinetoInput } from './kineto.js';
import { ncclInput } from './nccl.js';
import {
  smiCaptureInput,
  smiCsvInput,
  smiMonitorInput,
  smiQueryInput,
  smiTopoInput,
  smiXmlInput,
} from './nvidia-smi.js';
import { prometheusInput } from './prometheus.js';
import { stepBreakdownInput } from './step-breakdown.js';

/**
 * The order matters where formats overlap: a step breakdown that also names trace keys is a step
 * breakdown; captures and NCCL logs contain CSV-like and `#` lines, so they come before the
 * plain nvidia-smi formats; exporter metrics carry commas in their labels, so they come before CSV.
 */
export const INPUT_TABLE: readonly InputRow[] = [
  stepBreakdownInput,
  horovodInput,
  kinetoInput,
  smiXmlInput,
  smiCaptureInput,
  ncclInput,
  prometheusInput,
  smiQueryInput,
  smiTopoInput,
  smiMonitorInput,
  smiCsvInput,
];

/** The row for a file starting with `head`, or undefined for anything unknown. Pure. */
export function detectInput(head: string): InputRow | undefined {
  const t = head.replace(/^\uFEFF/, '').trimStart();
  return INPUT_TABLE.find((row) => row.detect(t));
}

/** Recognises an input by its first characters (never by file name); undefined when unknown. */
export function detectKind(head: string): InputKind | undefined {
  return detectInput(head)?.kind;
}
