#include "kernels/kernel_config.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/gemm_types.h"

namespace mmtune {

const char* ToString(KernelFamily family) {
  switch (family) {
    case KernelFamily::kPacked: return "packed";
    case KernelFamily::kDirect: return "direct";
    case KernelFamily::kGemv: return "gemv";
  }
  return "?";
}

const char* ToString(ParallelLoop loop) {
  switch (loop) {
    case ParallelLoop::kJc: return "jc";
    case ParallelLoop::kIc: return "ic";
    case ParallelLoop::kJr: return "jr";
    case ParallelLoop::kIcOwnB: return "icown";
  }
  return "?";
}

const char* ToString(TileOrder order) {
  switch (order) {
    case TileOrder::kColumnPanels: return "columnpanels";
    case TileOrder::kRowPanels: return "rowpanels";
  }
  return "?";
}

Result<KernelFamily> ParseKernelFamily(std::string_view text) {
  for (KernelFamily f : {KernelFamily::kPacked, KernelFamily::kDirect, KernelFamily::kGemv}) {
    if (text == ToString(f)) return f;
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown kernel family '" + std::string(text) +
                                                    "' (expected packed, direct or gemv)");
}

Result<ParallelLoop> ParseParallelLoop(std::string_view text) {
  for (ParallelLoop l :
       {ParallelLoop::kJc, ParallelLoop::kIc, ParallelLoop::kJr, ParallelLoop::kIcOwnB}) {
    if (text == ToString(l)) return l;
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown parallel loop '" + std::string(text) +
                                                    "' (expected jc, ic, jr or icown)");
}

Result<TileOrder> ParseTileOrder(std::string_view text) {
  for (TileOrder o : {TileOrder::kColumnPanels, TileOrder::kRowPanels}) {
    if (text == ToString(o)) return o;
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown tile order '" + std::string(text) +
                                                    "' (expected columnpanels or rowpanels)");
}

namespace {

// Bounds that no sensible config exceeds; they keep hostile or corrupt configs from asking for
// absurd buffers.
constexpr int kMaxBlock = 1 << 16;
constexpr int kMaxPrefetch = 64;
constexpr int kMaxThreads = 1024;

Status Invalid(const std::string& message) {
  return MakeError(ErrorCode::kInvalidArgument, message);
}

// k values per group of the packed panels (1 for f32 and f64).
int KGroupOf(DType dtype) {
  return WithGemmOf(dtype, []<typename X>() { return GemmTypes<X>::kGroup; });
}

}  // namespace

Status KernelConfig::ValidateFields(DType dtype) const {
  if (threads < 1 || threads > kMaxThreads) {
    return Invalid("threads = " + std::to_string(threads) + " outside [1, " +
                   std::to_string(kMaxThreads) + "]");
  }
  if (prefetch_a < 0 || prefetch_a > kMaxPrefetch || prefetch_b < 0 ||
      prefetch_b > kMaxPrefetch) {
    return Invalid("prefetch distances must be in [0, " + std::to_string(kMaxPrefetch) + "]");
  }
  if (tile_order != TileOrder::kColumnPanels && family != KernelFamily::kDirect) {
    return Invalid(std::string("the tile order (") + mmtune::ToString(tile_order) +
                   ") applies to the direct family only");
  }
  if (IsLowPrecision(dtype)) {
    if (family == KernelFamily::kDirect) {
      return Invalid(std::string("the ") + mmtune::ToString(dtype) +
                     " dtype has the packed and gemv families only, not direct");
    }
    if (kc % KGroupOf(dtype) != 0) {
      return Invalid("kc = " + std::to_string(kc) + " must be a multiple of " +
                     std::to_string(KGroupOf(dtype)) + " (the " + mmtune::ToString(dtype) +
                     " k group)");
    }
  }
  if (a_in_place && family != KernelFamily::kPacked) {
    return Invalid("reading A in place (ainplace) applies to the packed family only");
  }
  if (a_in_place && parallel_loop == ParallelLoop::kJr) {
    return Invalid("threads splitting jr share the packed A block: no ainplace with jr");
  }
  if (c_buffer && (!IsLowPrecision(dtype) || family != KernelFamily::kPacked)) {
    return Invalid("a buffer of C sums (cbuf) applies to the packed bf16 and s8 tile kernels "
                   "only");
  }
  if (mr < 1 || nr < 1) return Invalid("the tile " + std::to_string(mr) + "x" +
                                        std::to_string(nr) + " is not a tile");
  if (family == KernelFamily::kGemv) {
    if (k_unroll != 1 || mc != 0 || kc != 0 || nc != 0) {
      return Invalid("the gemv family takes no k_unroll, mc, kc or nc");
    }
    return OkStatus();
  }
  if (family == KernelFamily::kDirect) {
    if (mc != 0 || nc != 0) return Invalid("the direct family takes no mc or nc");
    if (kc < 0 || kc > kMaxBlock) {
      return Invalid("kc = " + std::to_string(kc) + " out of range (direct: 0 = the whole K)");
    }
    if (parallel_loop == ParallelLoop::kJr || parallel_loop == ParallelLoop::kIcOwnB) {
      return Invalid("the direct family parallelizes jc or ic, not jr or icown (it packs "
                     "nothing)");
    }
    return OkStatus();
  }
  if (kc < 1 || kc > kMaxBlock) return Invalid("kc = " + std::to_string(kc) + " out of range");
  if (mc < mr || mc > kMaxBlock || mc % mr != 0) {
    return Invalid("mc = " + std::to_string(mc) + " must be a positive multiple of mr = " +
                   std::to_string(mr));
  }
  if (nc < nr || nc > kMaxBlock || nc % nr != 0) {
    return Invalid("nc = " + std::to_string(nc) + " must be a positive multiple of nr = " +
                   std::to_string(nr));
  }
  return OkStatus();
}

Status KernelConfig::ValidateShape(std::int64_t m, std::int64_t n) const {
  if (family == KernelFamily::kGemv && m != 1 && n != 1) {
    return Invalid("the gemv family needs M = 1 or N = 1, not M = " + std::to_string(m) +
                   ", N = " + std::to_string(n));
  }
  return OkStatus();
}

std::string KernelConfig::ToString() const {
  std::string text = std::string(mmtune::ToString(family)) + " " + mmtune::ToString(isa) + " " +
                     std::to_string(mr) + "x" + std::to_string(nr);
  if (family != KernelFamily::kGemv) text += " ku" + std::to_string(k_unroll);
  if (family == KernelFamily::kPacked) {
    text += " mc" + std::to_string(mc) + " kc" + std::to_string(kc) + " nc" + std::to_string(nc);
  } else if (family == KernelFamily::kDirect && kc > 0) {
    text += " kc" + std::to_string(kc);
  }
  text += " pf" + std::to_string(prefetch_a) + "/" + std::to_string(prefetch_b) +
          (prefetch_c ? "/c" : "");
  // The default order is left out, so the configs of the other families, and direct configs
  // from before the field existed, read as they always have.
  if (tile_order != TileOrder::kColumnPanels) {
    text += std::string(" ") + mmtune::ToString(tile_order);
  }
  if (a_in_place) text += " ainplace";
  if (c_buffer) text += " cbuf";
  text += std::string(" ") + mmtune::ToString(parallel_loop) + " t" + std::to_string(threads);
  return text;
}

namespace {

// `text` as a non-negative int below 2^30, or nothing: no sign, no spaces, no trailing junk.
std::optional<int> ParseCount(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

Result<KernelConfig> ParseKernelConfig(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t space = text.find(' ', start);
    const std::size_t end = space == std::string_view::npos ? text.size() : space;
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  auto bad = [&](std::string_view word, const std::string& why) -> Error {
    return MakeError(ErrorCode::kInvalidArgument, "kernel config '" + std::string(text) +
                                                      "': " + why + " '" + std::string(word) +
                                                      "'");
  };
  if (words.size() < 3) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "kernel config '" + std::string(text) +
                         "': expected 'family isa MRxNR' and then fields, e.g. 'packed avx2 6x16 "
                         "ku1 mc132 kc512 nc2048 pf0/0/c jc t1'");
  }
  KernelConfig c;
  auto family = ParseKernelFamily(words[0]);
  if (!family) return family.error();
  c.family = *family;
  auto isa = ParseIsaLevel(words[1]);
  if (!isa) return isa.error();
  c.isa = *isa;
  const std::size_t x = words[2].find('x');
  const auto mr = ParseCount(words[2].substr(0, x));
  const auto nr = x == std::string_view::npos ? std::nullopt : ParseCount(words[2].substr(x + 1));
  if (!mr || !nr) return bad(words[2], "expected the tile as MRxNR, not");
  c.mr = *mr;
  c.nr = *nr;
  std::vector<std::string_view> seen;
  for (std::size_t w = 3; w < words.size(); ++w) {
    const std::string_view word = words[w];
    std::string_view key = word.substr(0, word.find_first_of("0123456789"));
    if (auto loop = ParseParallelLoop(word)) {
      key = "loop";
      c.parallel_loop = *loop;
    } else if (auto order = ParseTileOrder(word)) {
      key = "order";
      c.tile_order = *order;
    } else if (word == "ainplace") {
      c.a_in_place = true;
    } else if (word == "cbuf") {
      c.c_buffer = true;
    } else if (key == "pf") {
      const std::string_view rest = word.substr(2);
      const std::size_t slash = rest.find('/');
      const std::string_view tail = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
      const std::size_t second_slash = tail.find('/');
      const auto a = ParseCount(rest.substr(0, slash));
      const auto b = ParseCount(tail.substr(0, second_slash));
      const std::string_view flag =
          second_slash == std::string_view::npos ? "" : tail.substr(second_slash + 1);
      if (!a || !b || (second_slash != std::string_view::npos && flag != "c")) {
        return bad(word, "expected the prefetch as pfA/B or pfA/B/c, not");
      }
      c.prefetch_a = *a;
      c.prefetch_b = *b;
      c.prefetch_c = flag == "c";
    } else {
      int* field = key == "ku"   ? &c.k_unroll
                   : key == "mc" ? &c.mc
                   : key == "kc" ? &c.kc
                   : key == "nc" ? &c.nc
                   : key == "t"  ? &c.threads
                                 : nullptr;
      const auto value = field == nullptr ? std::nullopt : ParseCount(word.substr(key.size()));
      if (!value) return bad(word, "unknown field");
      *field = *value;
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return bad(word, "repeated field");
    }
    seen.push_back(key);
  }
  return c;
}

void to_json(nlohmann::json& json, const KernelConfig& c) {
  json = {{"family", ToString(c.family)},
          {"isa", ToString(c.isa)},
          {"mr", c.mr},
          {"nr", c.nr},
          {"k_unroll", c.k_unroll},
          {"mc", c.mc},
          {"kc", c.kc},
          {"nc", c.nc},
          {"prefetch_a", c.prefetch_a},
          {"prefetch_b", c.prefetch_b},
          {"prefetch_c", c.prefetch_c},
          {"parallel_loop", ToString(c.parallel_loop)},
          {"threads", c.threads}};
  // Only where it is not the default: the stored JSON of every config from before the field
  // existed, and its hash (the DB's config identity), stay as they were.
  if (c.tile_order != TileOrder::kColumnPanels) json["tile_order"] = ToString(c.tile_order);
  if (c.a_in_place) json["a_in_place"] = true;
  if (c.c_buffer) json["c_buffer"] = true;
}

Result<KernelConfig> KernelConfigFromJson(const nlohmann::json& json) {
  if (!json.is_object()) {
    return MakeError(ErrorCode::kCorrupt, "kernel config is not a JSON object");
  }
  KernelConfig c;
  auto read_int = [&](const char* name, int& out) -> Status {
    auto it = json.find(name);
    if (it == json.end() || !it->is_number_integer()) {
      return MakeError(ErrorCode::kCorrupt,
                       std::string("kernel config field '") + name + "' missing or not an integer");
    }
    const auto value = it->get<std::int64_t>();
    if (value < -(std::int64_t{1} << 30) || value > (std::int64_t{1} << 30)) {
      return MakeError(ErrorCode::kCorrupt,
                       std::string("kernel config field '") + name + "' out of range");
    }
    out = static_cast<int>(value);
    return OkStatus();
  };
  auto read_text = [&](const char* name) -> Result<std::string> {
    auto it = json.find(name);
    if (it == json.end() || !it->is_string()) {
      return MakeError(ErrorCode::kCorrupt,
                       std::string("kernel config field '") + name + "' missing or not a string");
    }
    return it->get<std::string>();
  };
  for (auto [name, field] : {std::pair<const char*, int*>{"mr", &c.mr},
                             {"nr", &c.nr},
                             {"k_unroll", &c.k_unroll},
                             {"mc", &c.mc},
                             {"kc", &c.kc},
                             {"nc", &c.nc},
                             {"prefetch_a", &c.prefetch_a},
                             {"prefetch_b", &c.prefetch_b},
                             {"threads", &c.threads}}) {
    if (auto status = read_int(name, *field); !status) return status.error();
  }
  auto prefetch_c = json.find("prefetch_c");
  if (prefetch_c == json.end() || !prefetch_c->is_boolean()) {
    return MakeError(ErrorCode::kCorrupt, "kernel config field 'prefetch_c' missing or not a bool");
  }
  c.prefetch_c = prefetch_c->get<bool>();
  auto family = read_text("family");
  if (!family) return family.error();
  auto parsed_family = ParseKernelFamily(*family);
  if (!parsed_family) return parsed_family.error();
  c.family = *parsed_family;
  auto isa = read_text("isa");
  if (!isa) return isa.error();
  auto parsed_isa = ParseIsaLevel(*isa);
  if (!parsed_isa) return parsed_isa.error();
  c.isa = *parsed_isa;
  auto loop = read_text("parallel_loop");
  if (!loop) return loop.error();
  auto parsed_loop = ParseParallelLoop(*loop);
  if (!parsed_loop) return parsed_loop.error();
  c.parallel_loop = *parsed_loop;
  // Configs stored before the tile order existed have none: they ran column panels first.
  if (json.contains("tile_order")) {
    auto order = read_text("tile_order");
    if (!order) return order.error();
    auto parsed_order = ParseTileOrder(*order);
    if (!parsed_order) return parsed_order.error();
    c.tile_order = *parsed_order;
  }
  // Likewise A and C: configs stored before the fields existed pack A and write C each k block.
  for (auto [name, field] :
       {std::pair{"a_in_place", &c.a_in_place}, std::pair{"c_buffer", &c.c_buffer}}) {
    if (auto value = json.find(name); value != json.end()) {
      if (!value->is_boolean()) {
        return MakeError(ErrorCode::kCorrupt,
                         std::string("kernel config field '") + name + "' is not a bool");
      }
      *field = value->get<bool>();
    }
  }
  return c;
}

}  // namespace mmtune
