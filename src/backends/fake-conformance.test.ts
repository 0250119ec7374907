import { FakeBackend, FakeCluster, fakeNode } from './fake-backend.js';
import { runBackendConformance } from './conformance.js';

// The same suite as the process backends, on the system clock: the fake's programs are the
// suite's Node scripts run in this process.
runBackendConformance(
  'fake',
  async () => {
    const cluster = new FakeCluster([fakeNode('fake-0', 2, '10.0.0.1'), fakeNode('fake-1', 2, '10.0.0.2')]);
    return {
      make: () => new FakeBackend(cluster),
      two_nodes: [0, 1],
      two_devices: [0, 0],
      timeout_ms: 10_000,
      close: async () => {},
    };
  },
  undefined,
  {
    environment: 'the fake backend runs no processes, so no venv, conda or env_setup',
    subprocesses: 'the fake backend runs no processes, so its programs fork none',
  },
);
