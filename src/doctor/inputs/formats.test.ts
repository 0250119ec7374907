import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { readHead } from '../io/read-files.js';
import { loadKinetoTrace } from '../parse/kineto/load-trace.js';
import { splitCapture } from '../parse/nvidia-smi/capture.js';
import { packagePath } from '../../util/package-root.js';
import { detectKind } from './table.js';

const fx = (...p: string[]) => packagePath('fixtures', 'doctor', ...p);

/** Every kind with real files where we have them (fixtures/doctor/SOURCES.md says where each is from). */
const REAL_FILES: readonly [string, string][] = [
  [fx('faults', 'cpu-oversubscribed.plain-export.trace.json.gz'), 'pytorch-trace'], // torch 1.13 legacy bare array (export_chrome_trace)
  [fx('faults', 'cpu-slow-getitem.trace.json.gz'), 'pytorch-trace'], // the same wrapped by goodput.torch.trace_handler (goodput_host first)
  [fx('faults', 'gpu-healthy.trace.json.gz'), 'pytorch-trace'], // torch 2.11 Kineto object, H100
  [fx('pytorch-traces', 'v100-ddp1-gpu-bound.rank0.json.gz'), 'pytorch-trace'],
  [fx('pytorch-traces', 'cpu-only.json.gz'), 'pytorch-trace'],
  [fx('faults', 'cpu-slow-getitem.steps.json'), 'step-breakdown'],
  [fx('horovod', 'horovod_timeline_small.json'), 'horovod-timeline'],
  [fx('nvidia-smi', 'xml', 'tesla-t4.xml'), 'nvidia-smi-xml'],
  [fx('nvidia-smi', 'captures', 'linux-x86_64__nvidia-l40s__595.80.txt'), 'nvidia-smi-capture'],
  [fx('nvidia-smi', 'captures', 'linux-x86_64__nvidia-l40s__595.80__load.metrics'), 'prometheus-metrics'],
  [fx('prometheus', 'dcgm-exporter-2xA100-3-scrapes.prom'), 'prometheus-metrics'],
  [fx('nccl', 'p4d-2node-16xA100-efa-allreduce.log'), 'nccl-log'],
  [fx('topology', 'dgx1-8xV100-topo-m.txt'), 'nvidia-smi-topo'],
];

describe('content sniffing never mistakes one format for another', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'goodput-formats-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const [file, kind] of REAL_FILES) {
    it(`${file.split('/').slice(-2).join('/')} is ${kind}`, async () => {
      assert.equal(detectKind(await readHead(file)), kind);
    });
  }

  it('a legacy torch 1.13 trace is a trace as .json and as .gz, never nvidia-smi CSV', async () => {
    const text = gunzipSync(readFileSync(fx('faults', 'cpu-oversubscribed.plain-export.trace.json.gz'))).toString(
      'utf8',
    );
    assert.ok(
      text.startsWith('[') && text.includes('"pid": "CPU functions"'),
      'the recorded file is the legacy bare-array form',
    );
    const plain = join(tmp, 'trace.json');
    writeFileSync(plain, text);
    assert.equal(detectKind(await readHead(plain)), 'pytorch-trace');
    // Wrapped by hand in {"traceEvents": ...} it reads the same.
    const wrapped = join(tmp, 'wrapped.json');
    writeFileSync(wrapped, `{"traceEvents": ${text}}`);
    const [a, b] = [await loadKinetoTrace(plain), await loadKinetoTrace(wrapped)];
    assert.equal(a.complete, true);
    assert.equal(a.data.legacy, true);
    assert.ok(a.data.steps.length >= 5, `${a.data.steps.length} steps`);
    assert.ok(a.data.dataLoader.ts.length >= 5);
    assert.equal(b.data.steps.length, a.data.steps.length);
  });

  it("each command of a real capture, saved alone, is recognised as that command's output", () => {
    const sections = splitCapture(
      readFileSync(fx('nvidia-smi', 'captures', 'linux-x86_64__nvidia-l40s__595.80.txt'), 'utf8'),
    );
    const body = (command: RegExp) => sections.find((x) => command.test(x.command))!.body;
    assert.equal(detectKind(body(/^nvidia-smi -q$/)), 'nvidia-smi-query');
    assert.equal(detectKind(body(/^nvidia-smi --query-gpu=/)), 'nvidia-smi-csv');
    assert.equal(detectKind(body(/^nvidia-smi dmon/)), 'nvidia-smi-monitor');
    assert.equal(detectKind(body(/^nvidia-smi pmon/)), 'nvidia-smi-monitor');
    assert.equal(detectKind(body(/^nvidia-smi topo -m$/)), 'nvidia-smi-topo');
  });

  it('each real file is claimed by exactly its own row, and near-misses are not claimed', async () => {
    const other: [string, string | undefined][] = [
      // exporter text whose metric lines hold commas is not CSV; a node exporter file is still exposition
      ['nvidia_smi_gpu_info{name="A100",uuid="GPU-1"} 1\nnvidia_smi_index{uuid="GPU-1"} 0\n', 'prometheus-metrics'],
      ['# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 3.41\n', 'prometheus-metrics'],
      // a monitor and NCCL log have "#" lines and name:value text, but are not exposition
      ['# gpu    pwr  gtemp\n# Idx      W      C\n    0     69     41\n', 'nvidia-smi-monitor'],
      [
        'node1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\nnode1:1234:1234 [0] NCCL INFO NET/Plugin : No plugin found\n',
        'nccl-log',
      ],
      // a bare array of numbers or of unrelated objects is nothing the doctor reads
      ['[1, 2, 3]', undefined],
      ['[{"id": 1, "value": "x"}]', undefined],
      ['just some text\n', undefined],
    ];
    for (const [head, kind] of other) assert.equal(detectKind(head), kind, head.slice(0, 40));
  });

  it('every fixture directory file is recognised or named as unknown, never crashes detection', async () => {
    for (const dir of ['faults', 'prometheus']) {
      for (const name of readdirSync(fx(dir))) {
        const kind = detectKind(await readHead(fx(dir, name)));
        assert.ok(kind !== undefined, `${dir}/${name}`);
        assert.ok(!kind.startsWith('nvidia-smi-csv'), `${dir}/${name} read as CSV`);
      }
    }
  });
});
