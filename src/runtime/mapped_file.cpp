// Mapping a program file read-only.
#include "runtime/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runtime/load_errors.h"

namespace et_ops::runtime {
namespace {

// Closes a descriptor when the scope ends, on every path.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

std::size_t regular_file_size(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw FileError(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) throw FileError(fmt::format("{}: not a regular file", path));
  return static_cast<std::size_t>(info.st_size);
}

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  FdCloser closer{fd};
  MappedFile file;
  file.size_ = regular_file_size(fd, path);
  if (file.size_ == 0) return file;  // mmap cannot map zero bytes; the preamble check reports it
  void* mapping = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapping == MAP_FAILED) throw FileError(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
  file.data_ = static_cast<const uint8_t*>(mapping);
  return file;
}

void MappedFile::release_pages(const uint8_t* begin, std::size_t size) const {
  if (data_ == nullptr || begin < data_ || begin > data_ + size_ || size > static_cast<std::size_t>(data_ + size_ - begin))
    return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + size) / page * page;
  // A failure leaves the pages resident, which changes no byte: not an error.
  if (first < end) (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace et_ops::runtime
