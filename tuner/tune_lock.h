// One tuner per machine at a time. Two `mmtune tune` runs on one machine time their candidates
// while the other computes, so both store winners (and peaks) measured on a shared core. A tune
// holds two advisory locks for its whole run: a machine-wide one keyed by the machine's
// fingerprint (any DB), and one on the DB file itself (any machine that shares the file). Both
// are flock(2) locks, which the kernel releases when their holder exits, however it exits.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mmtune/result.h"

namespace mmtune {

struct TuneLockOptions {
  // Where the machine-wide lock file lives: MMTUNE_LOCK_DIR when set, else /tmp (shared by every
  // user of the machine).
  std::string lock_dir;
  // Wait for a held lock (true) or fail at once (false: `tune --no-wait`).
  bool wait = true;
  // Called once per lock found held, before waiting for it, with a one-line message.
  std::function<void(const std::string&)> on_wait;
};

// The directory of the machine-wide lock: MMTUNE_LOCK_DIR, else /tmp.
std::string DefaultLockDir();

class TuneLock {
 public:
  // Takes the machine-wide lock of `fingerprint`, then the lock of the existing file `db_path`.
  // Release it only after this process has closed the DB: closing a descriptor of the DB file
  // drops every fcntl(2) lock this process holds on it, SQLite's own included. kIo, with a message naming the holder, when `options.wait` is
  // false and a lock is held, or when a lock file cannot be opened.
  static Result<TuneLock> Acquire(const std::string& fingerprint, const std::string& db_path,
                                  const TuneLockOptions& options);

  TuneLock(TuneLock&& other) noexcept;
  TuneLock& operator=(TuneLock&& other) noexcept;
  TuneLock(const TuneLock&) = delete;
  TuneLock& operator=(const TuneLock&) = delete;
  ~TuneLock();  // releases both

 private:
  TuneLock() = default;
  void Release();
  std::vector<int> fds_;
};

}  // namespace mmtune
