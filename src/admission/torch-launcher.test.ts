import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shebangInterpreter, unwrapTorchLauncher } from './torch-launcher.js';

const PY = '/usr/bin/python3.11';
const unwrap = (line: string, ...python: [string | undefined] | []) =>
  unwrapTorchLauncher(line.split(' '), python.length === 0 ? PY : python[0]);

describe('unwrapTorchLauncher', () => {
  it('rewrites torchrun to what each worker runs, with the rank count of nnodes x nproc_per_node', () => {
    assert.deepEqual(unwrap('torchrun --nproc_per_node 2 train.py --epochs 3 --nproc_per_node 5'), {
      kind: 'unwrapped',
      launcher: 'torchrun',
      command: [PY, 'train.py', '--epochs', '3', '--nproc_per_node', '5'],
      ranks: 2,
      max_restarts: undefined,
    });
    const dashed = unwrap(
      '/opt/venv/bin/torchrun --nnodes=2 --nproc-per-node=4 --rdzv-backend=c10d --rdzv-endpoint=h:29400 --max-restarts 3 -r 3 --tee=3 train.py',
    );
    assert.ok(dashed.kind === 'unwrapped');
    assert.deepEqual([dashed.command, dashed.ranks, dashed.max_restarts], [[PY, 'train.py'], 8, 3]);
    assert.equal(
      (unwrap('torchrun train.py') as { ranks: number }).ranks,
      1,
      "torchrun's defaults: one node, one process",
    );
    assert.deepEqual(
      (unwrap('torchrun --nproc_per_node 2 -- train.py --x') as { command: string[] }).command,
      [PY, 'train.py', '--x'],
      "argparse's end of options",
    );
  });

  it('leaves the count open where torchrun does not fix it', () => {
    for (const line of [
      'torchrun --standalone --nproc_per_node=gpu t.py',
      'torchrun --nnodes 1:4 --nproc_per_node 2 t.py',
      'torchrun --nproc_per_node auto t.py',
    ]) {
      const r = unwrap(line);
      assert.ok(r.kind === 'unwrapped' && r.ranks === undefined, line);
    }
    const fixedRange = unwrap('torchrun --nnodes 2:2 --nproc_per_node 2 t.py');
    assert.ok(fixedRange.kind === 'unwrapped' && fixedRange.ranks === 4);
  });

  it('keeps a module, a program run without Python, and the interpreter of python -m torch.distributed.run', () => {
    assert.deepEqual((unwrap('torchrun -m pkg.train --lr 1') as { command: string[] }).command, [
      PY,
      '-m',
      'pkg.train',
      '--lr',
      '1',
    ]);
    assert.deepEqual((unwrap('torchrun --no-python ./train.sh a') as { command: string[] }).command, [
      './train.sh',
      'a',
    ]);
    assert.deepEqual(
      (unwrap('python3 -u -X dev -m torch.distributed.run --nproc_per_node 2 t.py', undefined) as { command: string[] })
        .command,
      ['python3', '-u', '-X', 'dev', 't.py'],
    );
    const launch = unwrap('python -m torch.distributed.launch --use_env --nproc_per_node 3 t.py', undefined);
    assert.ok(
      launch.kind === 'unwrapped' && launch.ranks === 3 && launch.launcher === 'python -m torch.distributed.launch',
    );
  });

  it('rejects what it cannot rewrite faithfully, with the reason', () => {
    const reason = (line: string, ...python: [string | undefined] | []) => {
      const r = unwrap(line, ...python);
      assert.equal(r.kind, 'rejected', line);
      return (r as { reason: string }).reason;
    };
    assert.match(reason('python -m torch.distributed.launch --nproc_per_node 2 t.py'), /passes --local_rank/);
    assert.match(reason('torchrun --bogus 1 t.py'), /unknown option --bogus/);
    assert.match(reason('torchrun --nproc_per_node'), /needs a value/);
    assert.match(reason('torchrun --standalone'), /no script/);
    assert.match(reason('torchrun t.py', undefined), /cannot tell which Python/);
    assert.match(reason('torchrun --no_python -m x'), /contradict/);
  });

  it('leaves every other command alone', () => {
    for (const line of [
      'python3 train.py',
      'python -m pkg.train',
      'python3 -c import_torch',
      'deepspeed train.py',
      './torchrun.sh',
      'python3 torchrun',
    ]) {
      assert.deepEqual(unwrap(line), { kind: 'plain' }, line);
    }
  });
});

describe('shebangInterpreter', () => {
  it('reads the Python of a launcher script', () => {
    assert.equal(shebangInterpreter('#!/usr/bin/python3.11'), '/usr/bin/python3.11');
    assert.equal(shebangInterpreter('#!/usr/bin/env python3'), 'python3');
    assert.equal(shebangInterpreter('#! /opt/venv/bin/python'), '/opt/venv/bin/python');
    assert.equal(shebangInterpreter('#!/bin/sh'), undefined);
    assert.equal(shebangInterpreter('import sys'), undefined);
  });
});
