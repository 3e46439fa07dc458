#!/usr/bin/env python3
"""Summarizes a gemm_bench JSON file (Google Benchmark format) as a Markdown table.

    scripts/bench_summary.py results.json

One row per (dtype, threads, shape): the median GFLOP/s and % of peak of mmtune's default
config (through GemmPlan::Run, and bound to the shape where gemm_bench times that), its best
config and every peer, and the ratio of mmtune's best to the best peer.
"""
import json
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_summary.py RESULTS.json")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = defaultdict(dict)
    impls = []
    for bench in data["benchmarks"]:
        name = bench["name"]
        if bench.get("aggregate_name", "median") != "median" or "error_occurred" in bench:
            continue
        parts = name.split("/")
        key, impl = "/".join(parts[:3]), parts[3]
        if impl not in impls:
            impls.append(impl)
        rows[key][impl] = (bench.get("GFLOP/s", 0.0), bench.get("%peak", 0.0),
                           bench.get("label", ""))
    order = [i for i in ("mmtune_default", "mmtune_bound", "mmtune_best") if i in impls]
    peers = [i for i in impls if not i.startswith("mmtune")]
    print("| dtype/threads/shape | " + " | ".join(order + peers) +
          " | best/best peer |")
    print("|---" * (len(order) + len(peers) + 2) + "|")
    for key in rows:
        cells = []
        for impl in order + peers:
            if impl in rows[key]:
                gflops, peak, _ = rows[key][impl]
                cells.append(f"{gflops:.1f} ({peak:.0f}%)")
            else:
                cells.append("-")
        ours = max((rows[key][i][0] for i in order if i in rows[key]), default=0.0)
        theirs = max((rows[key][i][0] for i in peers if i in rows[key]), default=0.0)
        ratio = f"{ours / theirs:.2f}" if theirs > 0 else "-"
        print(f"| {key} | " + " | ".join(cells) + f" | {ratio} |")
    context = data.get("context", {})
    for field in sorted(context):
        if field.startswith(("peer_", "peak_", "mmtune_")):
            print(f"\n- {field}: {context[field]}", end="")
    print()


if __name__ == "__main__":
    main()
