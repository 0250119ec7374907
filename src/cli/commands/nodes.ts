import { connect, connectionFlags } from '../../client/connect.js';
import { formatTable } from '../../client/table.js';
import { parseFlags, type CliCommand } from '../command.js';

export const nodesCommand: CliCommand = {
  name: 'nodes',
  summary: 'List nodes and devices (with their GPU type) and the job holding each',
  help: `Usage: goodput nodes [--json] [--data-dir DIR | --server URL] [--token T]`,
  async run(argv) {
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
