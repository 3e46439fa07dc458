#include "machine/amx_permission.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(_M_X64))
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace mmtune {

bool RequestAmxTilePermission() {
#if defined(__linux__) && (defined(__x86_64__) || defined(_M_X64))
  // arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); the constants are the kernel ABI's
  // (asm/prctl.h), which older headers lack.
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtileData = 18;
  static const bool granted =
      ::syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
  return granted;
#else
  return false;
#endif
}

}  // namespace mmtune
