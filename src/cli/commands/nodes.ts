import { connect, connectionFlags } from '../../client/connect.js';
import { formatTable } from '../../client/table.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

/** `goodput nodes clear NODE[/DEVICE]`. */
async function clearMarks(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseFlags('nodes clear', [...argv], connectionFlags);
  const match = positionals.length === 1 ? /^(.+?)(?:\/(\d+))?$/.exec(positionals[0]!) : null;
  if (!match) throw usageError("nodes clear: expected one NODE or NODE/DEVICE. See 'goodput nodes --help'.");
  const device = match[2] === undefined ? undefined : Number(match[2]);
  const { cleared } = await connect(values).clearNode(match[1]!, device);
  if (cleared.length === 0) console.log(`no marks on ${positionals[0]}`);
  for (const m of cleared) console.log(`cleared: device ${m.device} of node ${m.node} (${m.kind}: ${m.reason})`);
  return 0;
}

export const nodesCommand: CliCommand = {
  name: 'nodes',
  help: `Usage: goodput nodes [--json] [--data-dir DIR | --server URL] [--token T]
       goodput nodes clear NODE[/DEVICE] [--data-dir DIR | --server URL] [--token T]

A device whose ranks hung is drained, one whose ranks straggled in several jobs is marked slow
(placement takes it last on its node, and the node after equal unmarked ones); the node's line
says so. 'clear' (admin) clears the marks of a node's
devices, or of one device.`,
  async run(argv) {
    if (argv[0] === 'clear') return clearMarks(argv.slice(1));
    const { values } = parseFlags('nodes', argv, { ...connectionFlags, json: { type: 'boolean' } }, false);
    const nodes = await connect(values).nodes();
    if (values.json) {
      console.log(JSON.stringify(nodes, null, 2));
      return 0;
    }
    const rows = nodes.flatMap((n) =>
      n.devices.map((d) => [
        n.name,
        String(d.index),
        d.kind,
        d.type,
        d.name,
        d.job ?? (d.busy ? '(another user)' : '-'),
      ]),
    );
    console.log(formatTable(['node', 'device', 'kind', 'type', 'name', 'job'], rows));
    const gpus = nodes.reduce((k, n) => k + n.devices.length, 0);
    console.log(`${gpus} device(s) on ${nodes.length} node(s)`);
    const types = new Map<string, number>();
    for (const d of nodes.flatMap((n) => n.devices)) types.set(d.type, (types.get(d.type) ?? 0) + 1);
    // A job runs on devices of one type only (docs/heterogeneous.md, "Live").
    if (types.size > 1)
      console.log(`GPU types: ${[...types].map(([t, k]) => `${t} (${k})`).join(', ')}; a job runs on one type`);
    for (const n of nodes) if (n.note) console.log(`${n.name}: ${n.usable}/${n.devices.length} usable (${n.note})`);
    return 0;
  },
};
