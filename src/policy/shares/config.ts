/**
 * Teams, weights and quotas of a cluster shared by many people (issue 48), and the text of a
 * shares file parsed into them (YAML, bounded: the file is small by nature). Pure: the file is
 * read by its callers (multiuser/shares-file.ts); a malformed text is refused with its line and
 * the fix (E_SHARES).
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { TeamShare } from '../../core/cluster.js';
import { GoodputError } from '../../core/errors.js';

export type { TeamShare };

/** The shares of a cluster. Without a file every user is their own team of weight 1. */
export interface SharesConfig {
  teams: readonly TeamShare[];
  /** Half-life (s) of past usage in the fair-share factor; default DEFAULT_HALF_LIFE_S. */
  half_life_s: number;
}

/** Slurm's PriorityDecayHalfLife default: 7 days. */
export const DEFAULT_HALF_LIFE_S = 7 * 86400;

/** The shares of a cluster without a shares file: no teams (each user their own), default half-life. */
export const NO_SHARES: SharesConfig = { teams: [], half_life_s: DEFAULT_HALF_LIFE_S };

/**
 * Why `shares` cannot apply to a cluster of GPU `types` (a quota naming a type the cluster lacks,
 * which would guarantee nothing, silently), or undefined when every quota names one of them.
 */
export function quotaTypeProblem(shares: SharesConfig, types: readonly string[]): string | undefined {
  for (const team of shares.teams)
    for (const type of Object.keys(team.quota))
      if (!types.includes(type))
        return (
          `team ${team.name}'s quota names GPU type '${type}', which the cluster does not have ` +
          `(its types: ${types.join(', ')}); name one of those`
        );
  return undefined;
}

/** Team name of a user with no team in the file: the user's own name (their own team of weight 1). */
export function teamOf(shares: SharesConfig | undefined, owner: string): string {
  for (const team of shares?.teams ?? []) if (team.members.includes(owner)) return team.name;
  return owner;
}

/** The team called `name`: from the file, or a user's own team of weight 1 without a quota. */
export function teamShare(shares: SharesConfig | undefined, name: string): TeamShare {
  return shares?.teams.find((t) => t.name === name) ?? { name, members: [name], weight: 1, quota: {} };
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}$/;
const MAX_BYTES = 64 * 1024;
const EXAMPLE = 'teams:\n  vision: {members: [alice, bob], weight: 2, quota: {a100: 8}}\n  nlp: {members: [carol]}';

/**
 * The shares of a shares file's `text` (`path` names it in errors). Format (docs/control-plane.md):
 * `teams:` a mapping of team name -> {members: [users], weight: number > 0 (default 1),
 * quota: {TYPE: devices}}; optional `half_life: 7d` (s, m, h or d). E_SHARES with the line and
 * the fix for anything else: an unknown key, a user in two teams, a bad number.
 */
export function parseShares(text: string, path: string): SharesConfig {
  if (text.length > MAX_BYTES)
    throw sharesError(path, undefined, `is over ${MAX_BYTES >> 10} KiB; is this the right file?`);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : undefined);
  const first = doc.errors[0];
  if (first) {
    const line = lines.linePos(first.pos[0]).line;
    throw sharesError(path, line, `is not valid YAML (${first.message.split('\n')[0]}); example:\n${EXAMPLE}`);
  }
  const root = doc.contents;
  if (root === null) return NO_SHARES;
  if (!isMap(root)) throw sharesError(path, lineOf(root), `must be a mapping with 'teams:'; example:\n${EXAMPLE}`);
  let half_life_s = DEFAULT_HALF_LIFE_S;
  const teams: TeamShare[] = [];
  const owner = new Map<string, string>();
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const value = pair.value as Node | null;
    if (key === 'half_life') {
      half_life_s = duration(isScalar(value) ? String(value.value) : '', path, lineOf(value ?? (pair.key as Node)));
    } else if (key === 'teams') {
      if (!isMap(value))
        throw sharesError(path, lineOf(value ?? (pair.key as Node)), `'teams' must be a mapping of team names`);
      for (const t of value.items) teams.push(team(t.key as Node, t.value as Node | null, path, lineOf, owner));
    } else {
      throw sharesError(
        path,
        lineOf(pair.key as Node),
        `unknown key '${key}': a shares file has 'teams' and 'half_life'`,
      );
    }
  }
  return { teams, half_life_s };
}

function team(
  keyNode: Node,
  value: Node | null,
  path: string,
  lineOf: (n: Node | null | undefined) => number | undefined,
  owner: Map<string, string>,
): TeamShare {
  const name = isScalar(keyNode) ? String(keyNode.value) : '';
  const at = lineOf(keyNode);
  if (!NAME.test(name)) throw sharesError(path, at, `team name '${name}' must be letters, digits, '_', '.', '@', '-'`);
  if (!isMap(value))
    throw sharesError(path, at, `team ${name} must be a mapping, e.g. ${name}: {members: [alice], weight: 1}`);
  let members: string[] = [];
  let weight = 1;
  const quota: Record<string, number> = {};
  for (const pair of value.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    const v = pair.value as Node | null;
    const line = lineOf(v ?? (pair.key as Node));
    if (key === 'members') {
      if (!isSeq(v)) throw sharesError(path, line, `team ${name}: 'members' must be a list, e.g. [alice, bob]`);
      members = v.items.map((m) => {
        const user = isScalar(m) ? String(m.value) : '';
        if (!NAME.test(user)) throw sharesError(path, lineOf(m as Node), `team ${name}: '${user}' is not a user name`);
        const other = owner.get(user);
        if (other !== undefined)
          throw sharesError(path, lineOf(m as Node), `user ${user} is in teams ${other} and ${name}; keep one`);
        owner.set(user, name);
        return user;
      });
    } else if (key === 'weight') {
      weight = isScalar(v) ? Number(v.value) : NaN;
      if (!(Number.isFinite(weight) && weight > 0))
        throw sharesError(path, line, `team ${name}: weight must be a number > 0, e.g. weight: 2`);
    } else if (key === 'quota') {
      if (!isMap(v))
        throw sharesError(path, line, `team ${name}: 'quota' must map GPU types to devices, e.g. {a100: 8}`);
      for (const q of v.items) {
        const type = isScalar(q.key) ? String(q.key.value) : '';
        const n = isScalar(q.value) ? Number(q.value.value) : NaN;
        if (!(Number.isInteger(n) && n >= 0))
          throw sharesError(
            path,
            lineOf((q.value as Node) ?? (q.key as Node)),
            `team ${name}: quota of ${type} must be a whole number of devices >= 0`,
          );
        quota[type] = n;
      }
    } else {
      throw sharesError(path, lineOf(pair.key as Node), `team ${name}: unknown key '${key}' (members, weight, quota)`);
    }
  }
  return { name, members, weight, quota };
}

function duration(text: string, path: string, line: number | undefined): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/.exec(text.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m?.[2] ?? ''] ?? 1;
  const value = m ? Number(m[1]) * unit : NaN;
  if (!(value > 0)) throw sharesError(path, line, `half_life must be a duration > 0 such as 7d, 12h or 3600s`);
  return value;
}

function sharesError(path: string, line: number | undefined, message: string): GoodputError {
  return new GoodputError('E_SHARES', `${path}${line !== undefined ? `:${line}` : ''}: shares file ${message}`);
}
