// `mmtune bench`: for each problem, the tuned runtime, the analytical default and each available
// peer library, timed by Google Benchmark in one process on the same buffers, repetitions
// interleaved at random across implementations, with GFLOP/s and % of the measured peak as
// counters. The JSON it writes is Google Benchmark's own format, so its comparison tooling works,
// and `mmtune report --bench` reads it.
//
// Benchmark names: "<dtype>/<layout>/<trans>/<M>x<N>x<K>/t<threads>/<impl>", impl one of tuned,
// default, unpacked (with packed_b), loop (with batch), plain and separate (with an epilogue or
// dequantization),
// openblas, onednn, libxsmm. Counters:
// gflops, pct_peak (of the FMA peak for the dtype and thread count). The label of a `tuned` row
// says the lookup tier (exact, nearest, default); with a batch, the batch and how it is split.
// Before it is timed, every implementation's result is compared with the reference on sampled
// elements; a wrong one is reported as an error row, never as a speed.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/machine.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct ComparisonRequest {
  std::vector<Problem> problems;     // row-major NN (what every peer supports)
  std::string db_path;               // the tuning DB the runtime reads
  std::vector<std::string> peers;    // names to include ("openblas", ...); empty = none
  int repetitions = 3;
  double min_time_seconds = 0.2;     // per repetition
  std::string json_path;             // Google Benchmark JSON, or empty
  // B as constant weights, packed once before the timed calls: "tuned" runs the runtime's
  // packed weights (Runtime::PackB), "default" those of a runtime without the DB's winners (the
  // analytical default, sized by what the DB measured of this machine), "unpacked" the
  // runtime's plain call; oneDNN runs its matmul with prepacked weights, peers
  // without such an API their plain call.
  bool packed_b = false;
  // > 0: each problem is a batch of this many GEMMs of its shape, operands one after another:
  // "tuned" and "default" run the runtime's strided batch (with and without the DB's winners),
  // "loop" one runtime call per item, oneDNN its batched matmul, peers without a batch API one
  // call per item. GFLOP/s count the whole batch.
  std::int64_t batch = 0;
  // Each GEMM followed by an epilogue: a bias per column of C where `bias`, then `activation`.
  // "tuned" and "default" fuse it (the runtime's and the default plan's Gemm with an Epilogue),
  // "plain" is the runtime's GEMM without it, "separate" that GEMM followed by a pass over C
  // that applies it (mmtune's own vectorized pass); oneDNN runs its matmul with a bias and an
  // eltwise post-op, other peers their GEMM followed by the same pass. GFLOP/s count the GEMM.
  bool bias = false;
  Activation activation = Activation::kNone;
  bool HasEpilogue() const { return bias || activation != Activation::kNone; }
  // s8 only: the u8 x s8 GEMM dequantized to f32 C (A's scale and one per column of B), then the
  // epilogue above (any activation, the bias f32), as a quantized linear layer runs it:
  // "tuned" and "default" fuse it (Runtime::Gemm with a Dequantization, the default plan with
  // its per-tile epilogue), "plain" is the s32 GEMM alone, "separate" the s32 GEMM followed by a
  // pass over C that dequantizes; oneDNN runs its u8 x s8 -> f32 matmul with output scales per
  // column, bias and post-op, other peers their s32 GEMM and the same pass.
  bool dequantize = false;
  // "bias+gelu", "relu", ...; "none" without an epilogue.
  std::string EpilogueText() const;
};

// Parses --epilogue: "bias", an activation (relu, gelu, silu), or both joined by '+'
// ("bias+gelu"), into `request`.
Status ParseEpilogue(const std::string& text, ComparisonRequest* request);

// Names of the peers compiled into this build, and their versions ("OpenBLAS 0.3.21 ..., core
// Zen" for OpenBLAS).
std::vector<std::pair<std::string, std::string>> PeerVersions();

// Checks the request without running anything: known peers in this build, valid row-major NN
// problems with nothing empty. RunComparison starts with it.
Status CheckComparisonRequest(const ComparisonRequest& request);

// Runs the comparison; the console table goes to stdout (Google Benchmark's reporter). `peaks` is
// to_json(PeakReport) for "% of peak" (null: pct_peak is 0). Fails before timing anything when the
// DB cannot be opened or a requested peer is not in this build.
Status RunComparison(const ComparisonRequest& request, const Machine& machine,
                     const nlohmann::json& peaks);

}  // namespace mmtune
