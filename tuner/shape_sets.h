// Where the shapes to tune come from: built-in presets, a comma-separated list on the command
// line, or a CSV/JSON file; and `--shard i/N`, which splits the list deterministically so that N
// machines of one type tune disjoint parts (merged later).
#pragma once

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

// Removes repeated shapes (first occurrence stays), then keeps the shapes whose position is
// `index` modulo `count`.
std::vector<Shape> ApplyShard(const std::vector<Shape>& shapes, const Shard& shard);

}  // namespace mmtune
