import { runBackendConformance } from '../conformance.js';
import { cpuSlots } from './devices.js';
import { LocalBackend } from './local-backend.js';

runBackendConformance('local', async () => ({
  make: () => new LocalBackend({ devices: cpuSlots(4), poll_ms: 50 }),
  two_nodes: [0, 0],
  two_devices: [1, 3],
  timeout_ms: 10_000,
  close: async () => {},
}));

// The same contract with every replica's output going through its log writer (log-writer.ts).
runBackendConformance('local, log cap', async () => ({
  make: () => new LocalBackend({ devices: cpuSlots(4), poll_ms: 50, log_limit_bytes: 1 << 20 }),
  two_nodes: [0, 0],
  two_devices: [1, 3],
  timeout_ms: 10_000,
  close: async () => {},
}));
