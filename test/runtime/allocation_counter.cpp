// Replaces every form of operator new and delete in the test executable
// that links this file, counting allocations while an AllocationCounter is
// alive. Calls from libet_ops.so and the kernel libraries count too: the
// executable's definitions interpose on theirs. Every form is replaced so
// that allocation and release always pair malloc with free
// (AddressSanitizer checks that they match).
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "allocation_counter.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted_allocation(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = alignment <= alignof(std::max_align_t) ? std::malloc(size ? size : 1)
                                                   : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* counted_nothrow(std::size_t size, std::size_t alignment) noexcept {
  try {
    return counted_allocation(size, alignment);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size, 0); }
void* operator new[](std::size_t size) { return counted_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_nothrow(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_nothrow(size, 0); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_nothrow(size, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_nothrow(size, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace et_ops::test {

AllocationCounter::AllocationCounter() {
  allocations = 0;
  counting = true;
}
AllocationCounter::~AllocationCounter() { counting = false; }
long AllocationCounter::count() const { return allocations.load(); }

}  // namespace et_ops::test
