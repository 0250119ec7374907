/**
 * Whether a goodput server on this machine already runs jobs on the devices `goodput profile` or
 * `goodput run` is about to use: a GPU shared with a training job slows both and may not hold
 * both in memory, so a profile would describe the contention, not the script, and a run would
 * fight the server's job.
 */
import type { NodeView } from '../../api/views.js';
import type { DeviceInfo } from '../../backends/backend.js';
import { connect } from '../../client/connect.js';
import { GoodputError } from '../../core/errors.js';

/** The node a server's local backend reports for this machine. */
const LOCAL_NODE = 'local';

/**
 * `devices` without the GPUs that jobs of the server of `flags`' data directory (or
 * GOODPUT_SERVER) hold on this machine. GPUs the user chose (`chosen`) are refused (E_DEVICES,
 * naming the job and the free GPUs) instead of being dropped, as is an 'auto' choice that leaves
 * none; CPU slots beside that server's running jobs get a warning through `warn`. Unchanged
 * when no server answers: nothing is known to share them.
 */
export async function withoutHeldDevices(
  devices: readonly DeviceInfo[],
  chosen: boolean,
  flags: { 'data-dir'?: string | undefined },
  warn: (line: string) => void,
): Promise<DeviceInfo[]> {
  const client = connect(flags);
  let nodes: NodeView[];
  try {
    nodes = await client.nodes();
  } catch {
    return [...devices];
  }
  const local = nodes.filter((n) => n.name === LOCAL_NODE).flatMap((n) => n.devices);
  const holders = devices.map((d) => ({
    device: d,
    holder: d.kind === 'gpu' ? local.find((v) => v.kind === 'gpu' && v.index === d.index && v.busy) : undefined,
  }));
  const held = holders.filter((h) => h.holder !== undefined);
  const rest = holders.filter((h) => h.holder === undefined).map((h) => h.device);
  if (held.length > 0 && (chosen || rest.length === 0)) {
    const which = held
      .map(({ device, holder }) => `GPU ${device.index} (${holder?.job ? `job ${holder.job}` : "another user's job"})`)
      .join(', ');
    const free = local.filter((v) => v.kind === 'gpu' && !v.busy).map((v) => v.index);
    throw new GoodputError(
      'E_DEVICES',
      `${which} ${held.length === 1 ? 'is' : 'are'} in use by the goodput server at ` +
        `${client.base_url}: sharing ${held.length === 1 ? 'it' : 'them'} would slow both and may ` +
        `not fit in memory. ` +
        (free.length > 0
          ? `Pass --gpus ${free.join(',')}${free.length === 1 ? ',' : ''} (free now), or wait until ${held.length === 1 ? 'it is' : 'they are'} free.`
          : 'Wait until a GPU is free (goodput nodes shows them), or submit the job to that server.'),
    );
  }
  if (held.length > 0)
    warn(
      `GPU(s) ${held.map((h) => h.device.index).join(',')} are in use by jobs of the goodput ` +
        `server at ${client.base_url}: using ${rest.map((d) => d.index).join(',')}`,
    );
  const busy = local.filter((v) => v.busy).length;
  if (rest.some((d) => d.kind === 'cpu') && busy > 0) {
    warn(
      `warning: the goodput server at ${client.base_url} runs jobs on ${busy} device(s) of this ` +
        `machine: they share its CPUs, and step times will be slower for it`,
    );
  }
  return rest;
}
