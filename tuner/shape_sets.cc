#include "tuner/shape_sets.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/text.h"

namespace mmtune {
namespace {

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

Result<ShapeRange> ParseCsvLine(std::string_view line) {
  if (line.find(',') == std::string_view::npos) return ParseShapeRange(line);
  const auto fields = Split(line, ',');
  if (fields.size() != 3) {
    return Invalid("expected 'M,N,K' or 'MxNxK', got '" + std::string(line) + "'");
  }
  return ParseShapeRange(std::string(Trim(fields[0])) + "x" + std::string(Trim(fields[1])) +
                         "x" + std::string(Trim(fields[2])));
}

Result<std::vector<ShapeRange>> ParseCsv(const std::string& path, const std::string& text) {
  std::vector<ShapeRange> shapes;
  std::istringstream lines(text);
  std::string raw;
  int number = 0;
  while (std::getline(lines, raw)) {
    ++number;
    std::string_view line = Trim(raw);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = Trim(line.substr(0, hash));
    }
    if (line.empty()) continue;
    if (shapes.empty() && Lower(line).find_first_of("mnk") == 0 &&
        Lower(line).find_first_of("0123456789") == std::string::npos) {
      continue;  // a header such as "m,n,k"
    }
    auto shape = ParseCsvLine(line);
    if (!shape) {
      return Invalid(path + ":" + std::to_string(number) + ": " + shape.error().message);
    }
    shapes.push_back(*shape);
  }
  return shapes;
}

Result<ShapeRange> ShapeFromJson(const nlohmann::json& item) {
  if (item.is_string()) return ParseShapeRange(item.get<std::string>());
  if (item.is_object()) {
    std::string text;
    for (const char* key : {"m", "n", "k"}) {
      const auto it = item.find(key);
      if (it == item.end() || !it->is_number_integer()) {
        return Invalid(std::string("needs an integer \"") + key + "\"");
      }
      text += (text.empty() ? "" : "x") + std::to_string(it->get<std::int64_t>());
    }
    return ParseShapeRange(text);
  }
  return Invalid("expected \"MxNxK\" or {\"m\":..,\"n\":..,\"k\":..}, got " + item.dump());
}

Result<std::vector<ShapeRange>> ParseJson(const std::string& path, const std::string& text) {
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Invalid(path + ": not valid JSON");
  const nlohmann::json* list = &document;
  if (document.is_object()) {
    const auto it = document.find("shapes");
    if (it == document.end()) return Invalid(path + ": a JSON object needs a \"shapes\" array");
    list = &*it;
  }
  if (!list->is_array()) return Invalid(path + ": expected an array of shapes");
  std::vector<ShapeRange> shapes;
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto shape = ShapeFromJson((*list)[i]);
    if (!shape) {
      return Invalid(path + ": shape #" + std::to_string(i + 1) + ": " + shape.error().message);
    }
    shapes.push_back(*shape);
  }
  return shapes;
}

ShapeRange Fixed(std::int64_t m, std::int64_t n, std::int64_t k) {
  return ShapeRange{{m, m}, {n, n}, {k, k}};
}

std::vector<ShapeRange> Fixed(std::initializer_list<Shape> shapes) {
  std::vector<ShapeRange> ranges;
  for (const Shape& s : shapes) ranges.push_back(Fixed(s.m, s.n, s.k));
  return ranges;
}

std::vector<ShapeRange> Cubes(std::initializer_list<std::int64_t> sizes) {
  std::vector<ShapeRange> ranges;
  for (std::int64_t s : sizes) ranges.push_back(Fixed(s, s, s));
  return ranges;
}

// Prefill of `tokens` (a range of M) through the given (N, K) layers.
std::vector<ShapeRange> Prefill(DimRange tokens, std::initializer_list<Shape> layers) {
  std::vector<ShapeRange> ranges;
  for (const Shape& layer : layers) {
    ranges.push_back(ShapeRange{tokens, {layer.n, layer.n}, {layer.k, layer.k}});
  }
  return ranges;
}

Result<std::vector<Shape>> Expanded(const Result<std::vector<ShapeRange>>& ranges) {
  if (!ranges) return ranges.error();
  return ExpandRanges(*ranges, BucketPolicy{});
}

}  // namespace

const std::vector<ShapePreset>& ShapePresets() {
  static const std::vector<ShapePreset> presets = {
      {"quick", "one shape of each kind: small, square, transformer, decode (GEMV)",
       Fixed({{32, 32, 32}, {256, 256, 256}, {128, 768, 768}, {1, 4096, 4096}})},
      {"square", "cubes from 64 to 2048", Cubes({64, 128, 256, 512, 1024, 2048})},
      {"small", "small and odd matrices, where call overhead and edges dominate",
       Fixed({{8, 8, 8}, {16, 16, 16}, {24, 24, 24}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64},
              {13, 17, 19}, {31, 33, 35}})},
      {"bert-base", "BERT-base layers at 128 tokens: QKV/output projections, FFN, attention",
       Fixed({{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {128, 128, 64},
              {128, 64, 128}})},
      {"llama-7b", "LLaMA-7B layers at 128 tokens of prefill",
       Fixed({{128, 4096, 4096}, {128, 11008, 4096}, {128, 4096, 11008}})},
      {"llama-7b-prefill",
       "LLaMA-7B layers at any prefill length from 1 to 2048 tokens (M ranges, bucketed)",
       Prefill({1, 2048}, {{0, 4096, 4096}, {0, 11008, 4096}, {0, 4096, 11008}})},
      {"decode", "one token at a time (M = 1): GEMV, memory-bound",
       Fixed({{1, 768, 768}, {1, 3072, 768}, {1, 768, 3072}, {1, 4096, 4096}, {1, 11008, 4096},
              {1, 4096, 11008}})},
  };
  return presets;
}

Result<std::vector<ShapeRange>> PresetRanges(std::string_view name) {
  std::string names;
  for (const ShapePreset& preset : ShapePresets()) {
    if (preset.name == name) return preset.ranges;
    names += (names.empty() ? "" : ", ") + preset.name;
  }
  return Invalid("unknown preset '" + std::string(name) + "' (presets: " + names + ")");
}

Result<std::vector<ShapeRange>> ParseShapeRangeList(std::string_view text) {
  std::vector<ShapeRange> ranges;
  for (std::string_view item : Split(text, ',')) {
    auto range = ParseShapeRange(Trim(item));
    if (!range) return range.error();
    ranges.push_back(*range);
  }
  return ranges;
}

Result<std::vector<ShapeRange>> ReadShapeRangesFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kNotFound, "cannot read shapes file '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return MakeError(ErrorCode::kIo, "cannot read shapes file '" + path + "'");
  const std::string text = contents.str();
  const std::string_view trimmed = Trim(text);
  const bool json = (path.size() >= 5 && Lower(path.substr(path.size() - 5)) == ".json") ||
                    (!trimmed.empty() && (trimmed.front() == '[' || trimmed.front() == '{'));
  auto shapes = json ? ParseJson(path, text) : ParseCsv(path, text);
  if (shapes && shapes->empty()) return Invalid(path + ": no shapes in the file");
  return shapes;
}

Result<std::vector<Shape>> ExpandRanges(const std::vector<ShapeRange>& ranges,
                                        const BucketPolicy& policy) {
  std::vector<Shape> shapes;
  for (const ShapeRange& range : ranges) {
    auto buckets = BucketShapes(range, policy);
    if (!buckets) return buckets.error();
    shapes.insert(shapes.end(), buckets->begin(), buckets->end());
  }
  return shapes;
}

Result<std::vector<Shape>> PresetShapes(std::string_view name) {
  return Expanded(PresetRanges(name));
}

Result<std::vector<Shape>> ParseShapeList(std::string_view text) {
  return Expanded(ParseShapeRangeList(text));
}

Result<std::vector<Shape>> ReadShapesFile(const std::string& path) {
  return Expanded(ReadShapeRangesFile(path));
}

Result<Shard> ParseShard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard shard;
  auto parse = [](std::string_view digits, int& out) {
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return error == std::errc() && end == digits.data() + digits.size() && !digits.empty();
  };
  if (slash == std::string_view::npos || !parse(text.substr(0, slash), shard.index) ||
      !parse(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 0 ||
      shard.index >= shard.count) {
    return Invalid("malformed shard '" + std::string(text) +
                   "' (expected i/N with 0 <= i < N, e.g. 0/4)");
  }
  return shard;
}

}  // namespace mmtune
