// Tests of x86 machines' kernels, models and spaces (the synthetic machines of
// synthetic_machine.h, configs naming avx2 or avx512) run where the build has the x86 kernels,
// that is in x86-64 builds; an aarch64 build skips them.
#pragma once

#include <gtest/gtest.h>

#include "kernels/microkernel.h"

#define MMTUNE_SKIP_WITHOUT_X86_KERNELS()                          \
  if (!::mmtune::BuildHasKernels(::mmtune::IsaLevel::kAvx2)) {     \
    GTEST_SKIP() << "this build has no x86 kernels (x86-64 only)"; \
  }
