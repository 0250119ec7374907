/** One colour per cause and per bottleneck, shared by every chart and finding of the HTML report. */
import type { Cause } from '../analyze/attribution.js';
import type { Bottleneck } from '../findings/finding.js';

export const CAUSE_COLOR: Readonly<Record<Cause, string>> = {
  'input-pipeline': '#f28e2b',
  'host-overhead': '#e15759',
  'sync-points': '#b07aa1',
  collectives: '#4e79a7',
  'memory-copies': '#edc948',
  compute: '#59a14f',
};

/** Idle time not split by cause (HTA's temporal breakdown). */
export const IDLE_COLOR = '#bab0ac';

export const BOTTLENECK_COLOR: Readonly<Record<Bottleneck, string>> = {
  'gpu-compute': CAUSE_COLOR.compute,
  'cpu-compute': CAUSE_COLOR.compute,
  compute: CAUSE_COLOR.compute,
  'input-pipeline': CAUSE_COLOR['input-pipeline'],
  'host-overhead': CAUSE_COLOR['host-overhead'],
  'sync-points': CAUSE_COLOR['sync-points'],
  communication: CAUSE_COLOR.collectives,
  'host-device-copy': CAUSE_COLOR['memory-copies'],
  'gpu-memory': '#9c755f',
  'cpu-contention': '#ff9da7',
  system: '#79706e',
  healthy: '#76b7b2',
  'no-data': IDLE_COLOR,
};

/** Colours for series that are not causes (one line per GPU), none of them a cause colour. */
export const SERIES_COLORS = ['#1f77b4', '#17becf', '#9467bd', '#8c564b', '#7f7f7f', '#bcbd22', '#393b79', '#637939'];
