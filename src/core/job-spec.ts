/** The job specification on the wire: its schema and the types derived from it (pure). */
import { z } from 'zod';
import { PROFILE_KEY, PROFILE_KEY_RULE } from './profile-key.js';
import { reservedEnvReason } from './reserved-env.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Size limits of a spec, checked at submit so that nothing fails later at launch (execve refuses
 * one string over 128 KiB, and argv + environment over the system's ARG_MAX, with E2BIG).
 * Documented in docs/control-plane.md.
 */
export const SPEC_LIMITS = {
  /** Bytes (UTF-8) of one argument of `command`. */
  arg_bytes: 64 << 10,
  /** Arguments in `command`. */
  args: 4096,
  /** Variables in `env`. */
  env_vars: 256,
  /** Bytes of one variable's value. */
  env_value_bytes: 64 << 10,
  /** Bytes of all arguments and variables together (NAME=VALUE, one NUL each). */
  total_bytes: 512 << 10,
  /** Bytes of `workdir`. */
  path_bytes: 4096,
} as const;

const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;
const noNul = (s: string) => !s.includes('\0');

/**
 * Schema of a job spec as accepted from users (HTTP body or file; admission/job-spec-file.ts reads
 * files, applies the default workdir and resolves venv/conda prefixes). Stages: `JobSpecInput`
 * (what the user writes, optional fields) -> `JobSpec` (validated, defaults applied, workdir
 * absolute).
 */
export const jobSpecSchema = z
  .object({
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
        'letters, digits, ".", "_" or "-", at most 63, starting with a letter or digit',
      ),
    command: z
      .array(
        z
          .string()
          .refine(noNul, 'must not contain a NUL byte')
          .refine((s) => bytes(s) <= SPEC_LIMITS.arg_bytes, `longer than ${SPEC_LIMITS.arg_bytes} bytes`),
        {
          // A command written as one string would need a shell to split it, and goodput never uses one.
          error: (iss) =>
            typeof iss.input === 'string'
              ? 'must be a list of arguments, e.g. command: ["python3", "train.py", "--lr", "0.1"]; it ' +
                'never goes through a shell (["sh", "-c", "..."] for shell syntax)'
              : undefined,
        },
      )
      .min(1, 'needs at least the program')
      .max(SPEC_LIMITS.args, `more than ${SPEC_LIMITS.args} arguments`),
    workdir: z
      .string()
      .min(1)
      .refine(noNul, 'must not contain a NUL byte')
      .refine((s) => bytes(s) <= SPEC_LIMITS.path_bytes, `longer than ${SPEC_LIMITS.path_bytes} bytes`)
      .optional(),
    env: z
      .preprocess(
        (env, ctx) => {
          // A key `__proto__` would be dropped silently (it is an object's prototype): refuse it by name.
          if (env !== null && typeof env === 'object' && Object.prototype.hasOwnProperty.call(env, '__proto__')) {
            ctx.addIssue({
              code: 'custom',
              path: ['__proto__'],
              message:
                'this variable name cannot be passed (JavaScript objects keep their prototype under it); rename the variable',
            });
          }
          // Names are checked here, where every issue is kept: zod reports a record key's own issue
          // as "Invalid key in record", which says neither what is wrong nor what to use.
          if (env !== null && typeof env === 'object' && !Array.isArray(env)) {
            for (const name of Object.keys(env)) {
              const bad =
                name.length > 128
                  ? 'longer than 128 characters'
                  : !ENV_NAME.test(name)
                    ? 'invalid variable name (letters, digits and "_", not starting with a digit)'
                    : reservedEnvReason(name);
              if (bad !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: bad });
            }
          }
          return env;
        },
        z
          .record(
            // Names are checked in superRefine: zod reports a record key's own issue as "Invalid key in record".
            z.string(),
            z
              .string({
                // Not converted: YAML has already turned 1.10 into 1.1 and 010 into 10.
                error: (iss) =>
                  typeof iss.input === 'number'
                    ? 'must be a string (in YAML, quote it: an unquoted number is read as a number, 1.10 as 1.1)'
                    : typeof iss.input === 'boolean'
                      ? 'must be a string (in YAML, quote it: an unquoted true or false is read as a boolean)'
                      : undefined,
              })
              .refine(noNul, 'must not contain a NUL byte')
              .refine(
                (s) => bytes(s) <= SPEC_LIMITS.env_value_bytes,
                `longer than ${SPEC_LIMITS.env_value_bytes} bytes`,
              ),
          )
          .refine(
            (env) => Object.keys(env).length <= SPEC_LIMITS.env_vars,
            `more than ${SPEC_LIMITS.env_vars} variables`,
          ),
      )
      .default({}),
    min_replicas: z.number().int().min(0).max(1024).default(0),
    max_replicas: z.number().int().min(1).max(1024).default(1),
    max_restarts: z.number().int().min(0).max(1000).default(3),
    preemptible: z.boolean().optional(),
    sdk: z
      .boolean()
      .optional()
      .describe(
        'Whether the job reports through the Goodput SDK. false: a plain script, run as a gang of ' +
          'max_replicas processes (docs/contract.md, "Plain scripts"). Default: decided at submit (a ' +
          'Python script that imports goodput: true; one that does not: false; anything else: ' +
          'unknown, treated as SDK-like).',
      ),
    check_script: z
      .boolean()
      .optional()
      .describe(
        'false: do not check at submit that the Python script of command exists in workdir on the ' +
          'server (for a script that exists only on the compute nodes).',
      ),
    resumable: z
      .boolean()
      .optional()
      .describe(
        'A plain script that resumes from its own snapshot (a torchrun-elastic script): it may be ' +
          'resized and preempted between min_replicas and max_replicas, and a stop loses only the ' +
          'work since its snapshot.',
      ),
    priority: z.number().int().min(-1000).max(1000).default(0),
    user: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/)
      .optional(),
    fixed_batch_size: z.number().int().min(1).optional(),
    batch_size_cap: z.number().int().min(1).optional(),
    venv: z.string().min(1).optional(),
    conda: z.string().min(1).optional(),
    env_setup: z.string().min(1).max(65536).optional(),
    profile: z
      .string()
      .regex(PROFILE_KEY, PROFILE_KEY_RULE)
      .optional()
      .describe(
        'Profile key: jobs of one key share what they measured, so a rerun starts at its efficient ' +
          'size. Default: derived from command (the script or module name; see ' +
          'docs/control-plane.md).',
      ),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.min_replicas > s.max_replicas)
      ctx.addIssue({ code: 'custom', path: ['min_replicas'], message: `must be <= max_replicas (${s.max_replicas})` });
    if (s.fixed_batch_size !== undefined && s.batch_size_cap !== undefined)
      ctx.addIssue({ code: 'custom', path: ['batch_size_cap'], message: 'cannot be combined with fixed_batch_size' });
    // POSIX absolute path (the control plane runs on Linux); a pure check keeps core/ free of node:path.
    if (s.workdir !== undefined && !s.workdir.startsWith('/'))
      ctx.addIssue({ code: 'custom', path: ['workdir'], message: 'must be an absolute path' });
    if (s.venv !== undefined && s.conda !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['conda'],
        message: 'cannot be combined with venv (a job runs in one environment)',
      });
    const total =
      s.command.reduce((n, a) => n + bytes(a) + 1, 0) +
      Object.entries(s.env).reduce((n, [k, v]) => n + bytes(k) + bytes(v) + 2, 0);
    if (total > SPEC_LIMITS.total_bytes)
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: `command and env together take ${total} bytes, more than ${SPEC_LIMITS.total_bytes}`,
      });
  });

/** What a user writes; every field but name and command is optional. */
export type JobSpecInput = z.input<typeof jobSpecSchema>;

/**
 * A validated job specification: defaults applied, `workdir` absolute (required). `command` is
 * argv, never interpolated into a shell.
 */
export type JobSpec = Omit<z.output<typeof jobSpecSchema>, 'workdir'> & { workdir: string };
