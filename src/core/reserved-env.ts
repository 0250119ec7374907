/**
 * Variables a job spec's `env` may not set, with why and what to use instead (docs/contract.md):
 * the contract's own (backends/contract-env.ts sets them for every attempt and would replace a
 * value of the spec's anyway), and every other `GOODPUT_*` name but the SDK's options that the
 * user chooses. Pure.
 */

/** The SDK's optional variables (python/goodput/torch/env.py): the user's to set, goodput never does. */
export const SDK_OPTION_ENV = [
  'GOODPUT_SHARE_DIR',
  'GOODPUT_REPORT_INTERVAL_S',
  'GOODPUT_STEP_LOG',
  'GOODPUT_STOP_DUMP_S',
  'GOODPUT_WORKER_START_S',
  'GOODPUT_SCALARS_INTERVAL_S',
  'GOODPUT_TENSORBOARD',
  'GOODPUT_TENSORBOARD_DIR',
] as const;

const SET_PER_RANK = 'goodput sets it for each process as torchrun sets it, from the ranks it places';
const ATTEMPT = 'goodput sets it for each attempt';

/** Why each reserved name (or family) is goodput's, and what to use instead. */
const RESERVED: readonly { test: RegExp; why: string; instead: string }[] = [
  {
    test: /^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|GROUP_WORLD_SIZE|ROLE_RANK|ROLE_NAME|ROLE_WORLD_SIZE)$/,
    why: SET_PER_RANK,
    instead: 'give the number of processes with -n (max_replicas) and read the variable in the script',
  },
  {
    test: /^(MASTER_ADDR|MASTER_PORT)$/,
    why: "goodput gives each attempt rank 0's node and a free port, so that two jobs never bind the same port",
    instead: 'use init_method="env://" (the default), which reads them',
  },
  {
    test: /^CUDA_VISIBLE_DEVICES$/,
    why: 'goodput gives each process the devices the policy placed it on',
    instead: "choose the server's GPUs with goodput up --gpus, and the job's count with -n",
  },
  {
    test: /^TORCHELASTIC_/,
    why: `${ATTEMPT}: torchrun's restart count, limit and run id`,
    instead: 'set the restarts with --max-restarts (max_restarts)',
  },
  {
    test: /^(GOODPUT_API|GOODPUT_JOB_ID|GOODPUT_TOKEN)$/,
    why: `${ATTEMPT}: it is how the replicas report to this server`,
    instead: 'nothing: the SDK reads it',
  },
  {
    test: /^GOODPUT_CHECKPOINT_DIR$/,
    why: `${ATTEMPT}: the job's checkpoint directory, kept across restarts and rescales`,
    instead: 'keep other files in gt.share_path() (GOODPUT_SHARE_DIR may be set)',
  },
  {
    test: /^(GOODPUT_ATTEMPT|GOODPUT_NUM_NODES|GOODPUT_GPU_TYPE)$/,
    why: `${ATTEMPT}: it describes the attempt's placement`,
    instead: 'nothing: read it in the script',
  },
];

/**
 * Why `name` may not be set by a spec's `env` and what to use instead, as one sentence; undefined
 * when it may be set. Every `GOODPUT_*` name but SDK_OPTION_ENV is reserved, so that a variable
 * the contract adds later never meets a value a spec already sets.
 */
export function reservedEnvReason(name: string): string | undefined {
  if ((SDK_OPTION_ENV as readonly string[]).includes(name)) return undefined;
  const known = RESERVED.find((r) => r.test.test(name));
  if (known) return `reserved: ${known.why}, replacing a value of yours; ${known.instead} (docs/contract.md)`;
  if (name.startsWith('GOODPUT_')) {
    return (
      `reserved: GOODPUT_* names are goodput's (docs/contract.md); the SDK's options a job may ` +
      `set are ${SDK_OPTION_ENV.join(', ')}; give a variable of your own another name`
    );
  }
  return undefined;
}
