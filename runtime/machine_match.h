// Which stored machines' winners a runtime may use: its own fingerprint always; with
// `allow_compatible`, also machines with another fingerprint whose kernels behave the same here:
// the same CPU ISA level and the same data cache sizes at every level (a sibling instance type,
// another stepping). Everything else (core count, vendor, model) may differ.
#pragma once

#include <nlohmann/json.hpp>

#include "machine/machine.h"

namespace mmtune {

// `description` is a stored machine description (to_json(Machine)); a description that cannot
// be read is never compatible.
bool IsCompatibleMachine(const nlohmann::json& description, const Machine& host);

}  // namespace mmtune
