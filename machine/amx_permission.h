// Linux hands out the AMX tile registers only to processes that ask (their state is 8 KiB more
// per thread to save on every context switch): the first AMX instruction of a process that has
// not asked faults.
#pragma once

namespace mmtune {

// Asks the kernel, once per process, for permission to use the AMX tile data registers; true
// when granted (or granted before). False on kernels without the request (before Linux 5.16),
// where the OS does not support AMX, and off Linux.
bool RequestAmxTilePermission();

}  // namespace mmtune
