/**
 * What the command's arguments change in a script's argparse options: a default overridden on the
 * command line (`main.py --dist-url env://` replaces `default='tcp://224.66.41.62:23456'`), a
 * rendezvous given there, and a rank or world size fixed there for every process. Pure.
 */

/** Where a line of the job's code is (script-launch.ts SourceCall without the call). */
export interface LineOrigin {
  line: number;
  file?: string;
}

/** Options that set a process group's rendezvous URL. */
const RENDEZVOUS_OPTIONS = ['--dist-url', '--dist_url', '--init-method', '--init_method'];
const RANK_OPTIONS = ['--rank'];
const WORLD_OPTIONS = ['--world-size', '--world_size'];
/** Flags of the upstream ImageNet recipe that start processes of its own (mp.spawn) per node. */
const SPAWN_FLAGS = ['--multiprocessing-distributed', '--multiprocessing_distributed'];

const OPTION_STRING = /["'](-{1,2}[A-Za-z][\w-]*)["']/g;

/** The value `args` gives option `name` (`--name value` or `--name=value`); undefined when not given. */
export function optionValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return undefined;
    if (a === name) return args[i + 1] ?? '';
    if (a.startsWith(`${name}=`)) return a.slice(name.length + 1);
  }
  return undefined;
}

/** What the arguments do to the script's options (see the module's comment). */
export interface CommandLineRules {
  /** Whether line i is inside an `add_argument(...)` of an option the command line gives. */
  overridden(i: number): boolean;
  /** A rendezvous option given on the command line whose value matches `value`. */
  given(value: RegExp): { call: string; line: number; file: string } | undefined;
  /** Rank or world size fixed on the command line for an option the script passes to init_process_group. */
  fixedRanks(): { call: string; drop: string[]; env_url?: string } | undefined;
}

/** The rules over the job's code (`lines`, comments removed) and the script's arguments `args`. */
export function commandLineRules(lines: readonly string[], args: readonly string[]): CommandLineRules {
  /** The options of the add_argument call covering line i (it starts at most 3 lines above). */
  const optionsAt = (i: number): string[] => {
    for (let j = i; j >= Math.max(0, i - 3); j--) {
      const line = lines[j]!;
      const at = line.indexOf('add_argument(');
      if (at === -1) {
        if (j < i && /\)\s*$/.test(line)) return []; // a statement above ended: not inside a call
        continue;
      }
      // Between the call's start and line i the parentheses stay open.
      const text = [line.slice(at), ...lines.slice(j + 1, i)].join('\n');
      if (j < i && count(text, '(') <= count(text, ')')) return [];
      return [...line.slice(at).matchAll(OPTION_STRING)].map((m) => m[1]!);
    }
    return [];
  };
  const defined = new Set<string>();
  for (let i = 0; i < lines.length; i++)
    if (lines[i]!.includes('add_argument(')) for (const o of optionsAt(i)) defined.add(o);
  const givenOption = (names: readonly string[]): { name: string; value: string } | undefined => {
    for (const name of names) {
      const value = optionValue(args, name);
      if (value !== undefined) return { name, value };
    }
    return undefined;
  };
  /** Whether init_process_group is passed `.field` (`rank=args.rank`) within its call's first lines. */
  const passedToGroup = (field: string): boolean => {
    const re = new RegExp(`\\b${field}\\s*=\\s*\\w+\\.${field}\\b`);
    return lines.some((l, i) => l.includes('init_process_group') && lines.slice(i, i + 4).some((x) => re.test(x)));
  };
  return {
    overridden: (i) => optionsAt(i).some((o) => optionValue(args, o) !== undefined),
    given: (value) => {
      const g = givenOption(RENDEZVOUS_OPTIONS);
      return g !== undefined && value.test(g.value)
        ? { call: `${g.name} ${g.value}`, line: 0, file: 'the command line' }
        : undefined;
    },
    fixedRanks: () => {
      const rank = givenOption(RANK_OPTIONS.filter((o) => defined.has(o)));
      const world = givenOption(WORLD_OPTIONS.filter((o) => defined.has(o)));
      const fixed = (g: typeof rank, field: string): boolean =>
        g !== undefined && /^\d+$/.test(g.value) && passedToGroup(field);
      if (!fixed(rank, 'rank') && !fixed(world, 'world_size')) return undefined;
      const spawn = SPAWN_FLAGS.filter((f) => defined.has(f) && args.includes(f));
      const shown = [world, rank].filter((f) => f !== undefined).map((f) => `${f.name} ${f.value}`);
      const env_url = RENDEZVOUS_OPTIONS.find((o) => defined.has(o));
      return {
        call: [...shown, ...spawn].join(' '),
        drop: [...[world, rank].filter((f) => f !== undefined).map((f) => f.name), ...spawn],
        ...(env_url !== undefined ? { env_url } : {}),
      };
    },
  };
}

function count(text: string, ch: string): number {
  return text.split(ch).length - 1;
}
