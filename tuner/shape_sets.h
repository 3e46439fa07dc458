// Where the shapes to tune come from: built-in presets, a comma-separated list on the command
// line, or a CSV/JSON file, each item a shape or a shape range (common/shape_range.h) that stands
// for its bucket shapes; and `--shard i/N`, which splits the list deterministically so that N
// machines of one type tune disjoint parts of about equal cost (merged later).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "common/shape_range.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct ShapePreset {
  std::string name;
  std::string description;
  std::vector<ShapeRange> ranges;  // most are single shapes
};

// "quick" (the default: one shape of each kind, minutes), "square", "small", "bert-base",
// "llama-7b", "llama-7b-prefill" (M in 1..2048), "decode".
const std::vector<ShapePreset>& ShapePresets();
Result<std::vector<ShapeRange>> PresetRanges(std::string_view name);

// "MxNxK[,MxNxK...]", each dimension a size or LO..HI; the error names the offending item.
Result<std::vector<ShapeRange>> ParseShapeRangeList(std::string_view text);

// CSV: one item per line, "MxNxK" or "M,N,K", each dimension a size or LO..HI (an "m,n,k" header
// line, blank lines and '#' comments allowed). JSON: an array of "MxNxK" strings or
// {"m":..,"n":..,"k":..} objects of sizes, or an object with such an array under "shapes". Chosen
// by the extension (.json) or, failing that, by the first character. Errors name the file and
// the line or item.
Result<std::vector<ShapeRange>> ReadShapeRangesFile(const std::string& path);

// The bucket shapes of every range, in list order.
Result<std::vector<Shape>> ExpandRanges(const std::vector<ShapeRange>& ranges,
                                        const BucketPolicy& policy);

// The same three sources as plain shapes, ranges expanded to their pow2 buckets: for commands
// that time shapes rather than tune ranges (bench).
Result<std::vector<Shape>> PresetShapes(std::string_view name);
Result<std::vector<Shape>> ParseShapeList(std::string_view text);
Result<std::vector<Shape>> ReadShapesFile(const std::string& path);

struct Shard {
  int index = 0;  // 0-based, < count
  int count = 1;
};
// "i/N" with 0 <= i < N.
Result<Shard> ParseShard(std::string_view text);

// Removes repeated items (first occurrence stays), then splits them between the `shard.count`
// shards by `cost(item)` (a double): the costliest first, each to the shard with the least cost
// so far (ties: the lowest index). Returns shard `shard.index`'s items in list order. Every
// machine computes the same split from the same list and costs. For shapes and for whole
// problems (`tune --from-record`).
template <typename Item, typename Cost>
std::vector<Item> ApplyShard(const std::vector<Item>& items, const Shard& shard, Cost&& cost) {
  std::vector<Item> unique;
  for (const Item& item : items) {
    if (std::find(unique.begin(), unique.end(), item) == unique.end()) unique.push_back(item);
  }
  std::vector<double> costs;
  for (const Item& item : unique) costs.push_back(cost(item));
  std::vector<std::size_t> order(unique.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return costs[x] > costs[y]; });
  std::vector<double> load(static_cast<std::size_t>(shard.count), 0.0);
  std::vector<bool> taken(unique.size(), false);
  for (std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    load[static_cast<std::size_t>(least)] += costs[i];
    taken[i] = least == shard.index;
  }
  std::vector<Item> mine;
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (taken[i]) mine.push_back(unique[i]);
  }
  return mine;
}

}  // namespace mmtune
