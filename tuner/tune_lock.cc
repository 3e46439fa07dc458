#include "tuner/tune_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace mmtune {
namespace {

// The process that holds the lock of `fd` wrote its pid there; empty when it cannot be read.
std::string HolderOf(int fd) {
  char text[32] = {};
  const ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
  if (got <= 0) return "";
  std::string pid(text, static_cast<std::size_t>(got));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

// Takes an exclusive flock on `fd`, waiting (after one `on_wait` call) where `wait` is set.
Status LockOrWait(int fd, const std::string& what, const TuneLockOptions& options) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return OkStatus();
  if (errno != EWOULDBLOCK) {
    return MakeError(ErrorCode::kIo, "cannot lock " + what + ": " + std::strerror(errno));
  }
  const std::string holder = HolderOf(fd);
  const std::string who =
      "another mmtune tune" + (holder.empty() ? std::string() : " (pid " + holder + ")");
  if (!options.wait) {
    return MakeError(ErrorCode::kIo, who + " holds " + what + "; not waiting (--no-wait)");
  }
  if (options.on_wait) options.on_wait(who + " holds " + what + "; waiting for it to finish");
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      return MakeError(ErrorCode::kIo, "cannot lock " + what + ": " + std::strerror(errno));
    }
  }
  return OkStatus();
}

}  // namespace

std::string DefaultLockDir() {
  const char* dir = std::getenv("MMTUNE_LOCK_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

Result<TuneLock> TuneLock::Acquire(const std::string& fingerprint, const std::string& db_path,
                                   const TuneLockOptions& options) {
  TuneLock lock;
  const std::string dir = options.lock_dir.empty() ? DefaultLockDir() : options.lock_dir;
  const std::string machine_path = dir + "/mmtune-tune-" + fingerprint + ".lock";
  // World-writable, so that every user's tune can take and annotate it; the umask may narrow
  // that, and then a read-only open still locks.
  int machine_fd = ::open(machine_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (machine_fd < 0) machine_fd = ::open(machine_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (machine_fd < 0) {
    return MakeError(ErrorCode::kIo, "cannot open the machine lock " + machine_path + ": " +
                                         std::strerror(errno));
  }
  lock.fds_.push_back(machine_fd);
  if (auto status = LockOrWait(machine_fd, "this machine (" + machine_path + ")", options);
      !status) {
    return status.error();
  }
  // Best effort: the pid only makes the waiting message of the next tune more helpful.
  if (::ftruncate(machine_fd, 0) == 0) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    static_cast<void>(::pwrite(machine_fd, pid.data(), pid.size(), 0));
  }

  // The DB file itself: SQLite locks it with fcntl(2) locks, which flock(2) locks do not touch.
  const int db_fd = ::open(db_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (db_fd < 0) {
    return MakeError(ErrorCode::kIo, "cannot open " + db_path + " to lock it: " +
                                         std::strerror(errno));
  }
  lock.fds_.push_back(db_fd);
  if (auto status = LockOrWait(db_fd, "the DB " + db_path, options); !status) {
    return status.error();
  }
  return lock;
}

TuneLock::TuneLock(TuneLock&& other) noexcept : fds_(std::exchange(other.fds_, {})) {}

TuneLock& TuneLock::operator=(TuneLock&& other) noexcept {
  if (this != &other) {
    Release();
    fds_ = std::exchange(other.fds_, {});
  }
  return *this;
}

TuneLock::~TuneLock() { Release(); }

void TuneLock::Release() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

}  // namespace mmtune
