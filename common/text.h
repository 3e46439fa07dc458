// Small text helpers shared by the parsers of shape lists, shape files and bench names.
#pragma once

#include <string_view>
#include <vector>

namespace mmtune {

// Every part between separators, empty ones included: "a,,b" gives {"a", "", "b"}, "" gives {""}.
// The parts view `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

}  // namespace mmtune
