/**
 * Whether a goodput server on this machine already runs jobs on the devices a profile is about to
 * use: a GPU shared with a training job slows both and may not hold both in memory, so the
 * profile's figures would describe the contention, not the script.
 */
import type { NodeView } from '../../api/views.js';
import type { DeviceInfo } from '../../backends/backend.js';
import { connect } from '../../client/connect.js';
import { GoodputError } from '../../core/errors.js';

/** The node a server's local backend reports for this machine. */
const LOCAL_NODE = 'local';

/**
 * Refuses (E_DEVICES) GPUs in `devices` that jobs of the server of the data directory (or
 * GOODPUT_SERVER) hold on this machine; warns through `warn` when CPU slots are asked for while
 * that server runs jobs here. Silent when no server answers: nothing is known to share them.
 */
export async function checkDevicesFree(devices: readonly DeviceInfo[], flags: { 'data-dir'?: string | undefined }, warn: (line: string) => void): Promise<void> {
  const client = connect(flags);
  let nodes: NodeView[];
  try {
    nodes = await client.nodes();
  } catch {
    return;
  }
  const local = nodes.filter((n) => n.name === LOCAL_NODE).flatMap((n) => n.devices);
  const clash = devices.filter((d) => d.kind === 'gpu').flatMap((d) => local.filter((v) => v.kind === 'gpu' && v.index === d.index && v.busy));
  if (clash.length > 0) {
    const which = clash.map((v) => `GPU ${v.index} (${v.job === null ? "another user's job" : `job ${v.job}`})`).join(', ');
    const free = local.filter((v) => v.kind === 'gpu' && !v.busy).map((v) => v.index);
    throw new GoodputError(
      'E_DEVICES',
      `${which} ${clash.length === 1 ? 'is' : 'are'} in use by the goodput server at ${client.base_url}: a profile there would measure the contention, not the script. ` +
        (free.length > 0 ? `Pass --gpus ${free.join(',')}${free.length === 1 ? ',' : ''} (free now), or profile once the job${clash.length === 1 ? ' is' : 's are'} done.` : 'Profile once a GPU is free (goodput nodes shows them).'),
    );
  }
  const busy = local.filter((v) => v.busy).length;
  if (devices.some((d) => d.kind === 'cpu') && busy > 0) {
    warn(`warning: the goodput server at ${client.base_url} runs jobs on ${busy} device(s) of this machine: they share its CPUs with the profile, whose step times will be slower for it`);
  }
}
