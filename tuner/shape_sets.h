// Where the shapes to tune come from: built-in presets, a comma-separated list on the command
// line, or a CSV/JSON file; and `--shard i/N`, which splits the list deterministically so that N
// machines of one type tune disjoint parts (merged later).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct ShapePreset {
  std::string name;
  std::string description;
  std::vector<Shape> shapes;
};

// "quick" (the default: one shape of each kind, minutes), "square", "small", "bert-base",
// "llama-7b", "decode".
const std::vector<ShapePreset>& ShapePresets();
Result<std::vector<Shape>> PresetShapes(std::string_view name);

// "MxNxK[,MxNxK...]"; the error names the offending item.
Result<std::vector<Shape>> ParseShapeList(std::string_view text);

// CSV: one shape per line, "MxNxK" or "M,N,K" (an "m,n,k" header line, blank lines and '#'
// comments allowed). JSON: an array of "MxNxK" strings or {"m":..,"n":..,"k":..} objects, or an
// object with such an array under "shapes". Chosen by the extension (.json) or, failing that, by
// the first character. Errors name the file and the line or item.
Result<std::vector<Shape>> ReadShapesFile(const std::string& path);

struct Shard {
  int index = 0;  // 0-based, < count
  int count = 1;
};
// "i/N" with 0 <= i < N.
Result<Shard> ParseShard(std::string_view text);

// Removes repeated items (first occurrence stays), then keeps the items whose position is
// `index` modulo `count`. For shapes and for whole problems (`tune --from-record`).
template <typename Item>
std::vector<Item> ApplyShard(const std::vector<Item>& items, const Shard& shard) {
  std::vector<Item> unique;
  for (const Item& item : items) {
    if (std::find(unique.begin(), unique.end(), item) == unique.end()) unique.push_back(item);
  }
  std::vector<Item> mine;
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shard.count)) == shard.index) {
      mine.push_back(unique[i]);
    }
  }
  return mine;
}

}  // namespace mmtune
