#include "reports/report_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mmtune {
namespace {

std::string ParentDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  return OkStatus();
}

}  // namespace

Status WriteReportFile(const std::string& path, std::string_view text) {
  const std::string directory = ParentDirectory(path);
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kNotFound,
                     "cannot write " + path + ": directory " + directory + " does not exist");
  }
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return MakeError(ErrorCode::kIo, "cannot write " + path + ": it is a directory");
  }
  const std::string temp = (std::filesystem::path(directory) /
                            ("." + std::filesystem::path(path).filename().string() + ".tmp-" +
                             std::to_string(::getpid())))
                               .string();
  // 0666: the umask decides the permissions, as for any file a tool creates.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return MakeError(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
  }
  Status written = WriteAll(fd, text, path);
  if (::close(fd) != 0 && written) {
    written = MakeError(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
  }
  if (written && ::rename(temp.c_str(), path.c_str()) != 0) {
    written = MakeError(ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno));
  }
  if (!written) (void)::unlink(temp.c_str());
  return written;
}

}  // namespace mmtune
