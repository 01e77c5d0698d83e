// A whole file mapped read-only (MAP_PRIVATE, PROT_READ): a program's
// constants are used in place, and a kernel that writes to one faults
// instead of silently corrupting the program for every other run state.
#ifndef ET_OPS_SRC_RUNTIME_MAPPED_FILE_H
#define ET_OPS_SRC_RUNTIME_MAPPED_FILE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace et_ops::runtime {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws FileError naming the path and the reason.
  static MappedFile open(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Drops this process's pages of the whole pages inside [begin, begin +
  // size) (madvise MADV_DONTNEED): they leave its resident set, the page
  // cache keeps them, and a later read faults them back in from the file
  // with the same bytes. Nothing outside the mapping is touched.
  void release_pages(const uint8_t* begin, std::size_t size) const;

 private:
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_MAPPED_FILE_H
