#!/usr/bin/env python3
"""Summarizes a gemm_bench JSON file (Google Benchmark format) as a Markdown table.

    scripts/bench_summary.py [--fastest] results.json

One row per (dtype, threads, shape): the GFLOP/s and % of peak of mmtune's default config
(through GemmPlan::Run, and bound to the shape where gemm_bench times that), its best config,
the configs named with --mmtune_configs and every peer, and the ratio of mmtune's fastest to the
best peer. Cells are the medians of the repetitions, or with --fastest the fastest repetition
(the JSON must then hold every repetition: run gemm_bench with
--benchmark_report_aggregates_only=false). On a shared VM whose neighbours take the core's
time, the fastest repetition moves least: the same config timed twice in one run had medians
18% apart and fastest repetitions within 3% (Zen 3 VM, 2026-11-25).
"""
import json
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    fastest = "--fastest" in args
    args = [a for a in args if a != "--fastest"]
    if len(args) != 1:
        sys.exit("usage: bench_summary.py [--fastest] RESULTS.json")
    with open(args[0]) as f:
        data = json.load(f)
    rows = defaultdict(dict)
    impls = []
    for bench in data["benchmarks"]:
        if "error_occurred" in bench:
            continue
        if fastest:
            if bench.get("run_type") != "iteration":
                continue
            name = bench.get("run_name", bench["name"])
        else:
            if bench.get("aggregate_name", "median") != "median":
                continue
            name = bench["name"]
        parts = name.split("/")
        key, impl = "/".join(parts[:3]), parts[3]
        if impl not in impls:
            impls.append(impl)
        cell = (bench.get("GFLOP/s", 0.0), bench.get("%peak", 0.0), bench.get("label", ""))
        if impl not in rows[key] or cell[0] > rows[key][impl][0]:
            rows[key][impl] = cell
    if fastest and not rows:
        sys.exit("bench_summary.py: no repetitions in the file (run gemm_bench with "
                 "--benchmark_report_aggregates_only=false)")
    configs = sorted((i for i in impls if i.startswith("mmtune_config")),
                     key=lambda i: int(i[len("mmtune_config"):]))
    order = [i for i in ("mmtune_default", "mmtune_bound", "mmtune_best") if i in impls] + configs
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
    labels = {}
    for key in rows:
        for impl in configs:
            if impl in rows[key] and rows[key][impl][2]:
                labels.setdefault(impl, rows[key][impl][2])
    for impl in configs:
        if impl in labels:
            print(f"\n- {impl}: {labels[impl]}", end="")
    context = data.get("context", {})
    for field in sorted(context):
        if field.startswith(("peer_", "peak_", "mmtune_")):
            print(f"\n- {field}: {context[field]}", end="")
    print()


if __name__ == "__main__":
    main()
