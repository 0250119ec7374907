/** Public API of the goodput model (pure; pollux-spec §3-4.1). */
export type { BatchChoice, BatchLimits, GoodputModel, GradParams, PerfParams, ProfilePoint } from './types.js';
export { accumStepTime_s, logOverlap, networkTime_s, optimStepTime_s, stepTime_s, throughput } from './throughput.js';
export { adascaleGain, efficiency } from './efficiency.js';
export { fitPerfParams } from './fit.js';
export {
  crossNodeSyncTime_s,
  fitNetworkModel,
  oneNodePoints,
  predictPerfParams,
  sizeProxy,
  withNetworkModel,
} from './network-model.js';
export type { NetworkModelOptions, NetworkParams, SizeProxy } from './network-model.js';
export { fitSyncPhysics } from './sync-physics.js';
export type { SyncPhysics } from './sync-physics.js';
export { profilePoint } from './profile.js';
export type { MeasuredStep } from './profile.js';
export { minimizeBounded } from './lbfgsb.js';
export type { MinimizeOptions, MinimizeResult, ObjectiveWithGradient } from './lbfgsb.js';
export { SPLIT_EPS, capLocalBatch, splitBatch, splitFixedBatch } from './batch-split.js';
export type { LocalBatch } from './batch-split.js';
export { NUM_BATCH_CANDIDATES, fixedBatchChoice, geomspace, goodputOf, optimizeBatch } from './optimize.js';
export { bestGoodput, goodputSpeedupFn, linearSpeedupFn } from './speedup.js';
export type { BatchPolicy, SpeedupFn } from './speedup.js';
export {
  MEASURED_ERROR_TOLERANCE,
  addToProfile,
  clampProgress,
  configKey,
  emptyProfile,
  gradAt,
  measuredError,
  mergePoints,
  modelPoints,
  shapeKey,
} from './key-profile.js';
export type { GradSample, KeyProfile } from './key-profile.js';
