// Counts operator new calls in the whole process while alive (see
// allocation_counter.cpp, which must be linked into the test executable).
// Catch2 assertions may allocate: make none while a counter is alive.
#ifndef ET_OPS_TEST_RUNTIME_ALLOCATION_COUNTER_H
#define ET_OPS_TEST_RUNTIME_ALLOCATION_COUNTER_H

namespace et_ops::test {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  long count() const;
};

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_RUNTIME_ALLOCATION_COUNTER_H
