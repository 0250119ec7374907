#!/usr/bin/env python3
"""Regenerates data/pollux/nd_interp_table.csv.gz (needs numpy and scipy; not run by the build).

The Pollux artifact's simulator gets the throughput of placements spanning 5 or more nodes from
scipy's LinearNDInterpolator over (num_nodes, num_replicas, local_bsz): placements.csv averaged
by that key, in sorted key order, followed by scalability.csv. The point set is a degenerate grid,
so the Delaunay triangulation (Qhull) has flat simplices and the result for a query lying on a
shared face depends on the simplex the point-location walk ends in. The original evaluates ONE
point per call (the walk starts at simplex 0 every time); evaluating many points in one call
starts each walk where the previous one ended and gives different values for ~3% of the queries,
which is enough to change Optimus' decisions. This script therefore evaluates point by point.

Usage: python3 scripts/pollux-nd-table.py [out.csv.gz]   (rows: the reachable queries, see
pollux-spec §2.3: nodes 5-16, replicas n..min(4n,64), integer local_bsz in the app's range with
replicas * local_bsz <= max batch; ncf is never distributed and is omitted.)
"""
import csv
import gzip
import os
import sys

import numpy as np
from scipy.interpolate import LinearNDInterpolator

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'pollux', 'traces')
APPS = {'bert': None, 'cifar10': None, 'deepspeech2': None, 'imagenet': None, 'yolov3': 8}


def interpolator(app):
    placements = list(csv.DictReader(open(os.path.join(ROOT, app, 'placements.csv'))))
    groups = {}
    for row in placements:
        p = row['placement']
        key = (len(p), sum(map(int, p)), int(row['local_bsz']))
        groups.setdefault(key, []).append((float(row['step_time']), float(row['sync_time'])))
    points, values = [], []
    for key in sorted(groups):
        points.append(key)
        values.append(np.array(groups[key]).mean(axis=0))
    for row in csv.DictReader(open(os.path.join(ROOT, app, 'scalability.csv'))):
        points.append((int(row['num_nodes']), int(row['num_replicas']), int(row['local_bsz'])))
        values.append((float(row['step_time']), float(row['sync_time'])))
    bsz = [int(r['local_bsz']) for r in placements]
    return LinearNDInterpolator(np.array(points, dtype=float), np.array(values)), min(bsz), max(bsz)


def max_batch(app):
    return max(int(f[len('validation-'):-4]) for f in os.listdir(os.path.join(ROOT, app)) if f.startswith('validation-'))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, '..', 'nd_interp_table.csv.gz')
    with gzip.open(out, 'wt') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(['application', 'num_nodes', 'num_replicas', 'local_bsz', 'step_time', 'sync_time'])
        for app, max_local_override in APPS.items():
            nd, lo, hi = interpolator(app)
            hi = max_local_override or hi
            big = max_batch(app)
            for n in range(5, 17):
                for r in range(n, min(4 * n, 64) + 1):
                    for b in range(lo, hi + 1):
                        if r * b > big:
                            break
                        step, sync = nd([n, r, b])[0]  # one point per call, as the original
                        w.writerow([app, n, r, b, repr(float(step)), repr(float(sync))])


if __name__ == '__main__':
    main()
