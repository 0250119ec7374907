/**
 * Reading and validating the job specification a user writes (YAML/JSON file or CLI flags); the
 * schema and its types live in core/job-spec.ts.
 */
import { isAbsolute, resolve } from 'node:path';
import type { z } from 'zod';
import { GoodputError } from '../core/errors.js';
import { closestMatch } from '../util/suggest.js';
import { jobSpecSchema, type JobSpec } from '../core/job-spec.js';
import { parseSpecText, readSpecText } from './spec-file.js';

/**
 * Formats every issue of a failed parse as `field: message`, joined by '; '. An unknown field at
 * the top of an object schema names the closest known one (`max_replica: unknown field (did you
 * mean 'max_replicas'?)`).
 */
export function formatIssues(error: z.ZodError, schema?: z.ZodType): string {
  const fields =
    schema !== undefined && 'shape' in schema && typeof schema.shape === 'object' && schema.shape !== null
      ? Object.keys(schema.shape)
      : [];
  return error.issues
    .flatMap((i) => {
      const at = i.path.map(String);
      if (i.code === 'unrecognized_keys') {
        return i.keys.map((k) => {
          const near = at.length === 0 ? closestMatch(k, fields) : undefined;
          return `${[...at, k].join('.')}: unknown field${near ? ` (did you mean '${near}'?)` : ''}`;
        });
      }
      return [`${at.length ? at.join('.') : '(spec)'}: ${i.message}`];
    })
    .join('; ');
}

/**
 * Validates a spec; `workdir` defaults to `default_workdir`, a relative `venv` or `conda` prefix
 * is resolved against the workdir. `profile` stays absent when not given: Controller.submit
 * stores the command's default (a command given on the command line may replace the file's).
 * Throws E_SPEC naming every bad field. Does not check that the directories exist (they may be
 * made by `env_setup`, or exist only where replicas run).
 */
export function validateJobSpec(input: unknown, default_workdir: string, source = 'job spec'): JobSpec {
  const parsed = jobSpecSchema.safeParse(input);
  if (!parsed.success)
    throw new GoodputError('E_SPEC', `${source} is invalid: ${formatIssues(parsed.error, jobSpecSchema)}`);
  const s = parsed.data;
  const spec: JobSpec = { ...s, workdir: s.workdir ?? default_workdir };
  if (spec.user === undefined) delete spec.user;
  if (spec.preemptible === undefined) delete spec.preemptible;
  for (const key of ['venv', 'conda'] as const) {
    const prefix = spec[key];
    if (prefix === undefined) delete spec[key];
    else spec[key] = resolve(spec.workdir, prefix);
  }
  if (spec.env_setup === undefined) delete spec.env_setup;
  return spec;
}

/**
 * Reads a spec file (YAML or JSON; JSON is YAML) and validates it. A relative `workdir` in the
 * file is resolved against the file's directory; the default workdir is the caller's cwd.
 */
export function readJobSpecFile(path: string, cwd: string): JobSpec {
  return validateJobSpec(readJobSpecDocument(path, cwd), cwd, path);
}

/**
 * A spec file's fields before validation (a relative `workdir` resolved against the file's
 * directory), for a caller that completes them first: `goodput submit -J NAME job.yaml` names a
 * job whose file has no name, and a command after `--` runs in the file's environment. E_INPUT
 * when unreadable, E_SPEC when not YAML/JSON or not a mapping of fields.
 */
export function readJobSpecDocument(path: string, cwd: string): Record<string, unknown> {
  // Size checked before reading, entries counted before parsing (control/spec-file.ts).
  const doc = parseSpecText(readSpecText(path), path);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new GoodputError(
      'E_SPEC',
      `${path} is invalid: expected a mapping of fields (command: [...], name: ...), got ` +
        `${doc === null ? 'an empty document' : Array.isArray(doc) ? 'a list' : typeof doc}`,
    );
  }
  const fields = { ...(doc as Record<string, unknown>) };
  if (typeof fields.workdir === 'string' && !isAbsolute(fields.workdir))
    fields.workdir = resolve(resolve(cwd, path, '..'), fields.workdir);
  return fields;
}
