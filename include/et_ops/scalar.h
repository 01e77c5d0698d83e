// Scalar: an aten `Scalar` argument (an int or a double, kept as the caller
// gave it).
#ifndef ET_OPS_SCALAR_H
#define ET_OPS_SCALAR_H

#include <cstdint>

namespace et_ops {

// Which of the two a Scalar holds matters: aten treats them differently (an
// integral tensor rejects a floating alpha; an int64 alpha must stay exact).
class Scalar {
 public:
  constexpr Scalar(int value) : Scalar(static_cast<int64_t>(value)) {}  // NOLINT: literals convert
  constexpr Scalar(int64_t value) : integral_(true), int_(value) {}      // NOLINT
  constexpr Scalar(double value) : integral_(false), double_(value) {}   // NOLINT

  constexpr bool is_integral() const { return integral_; }
  // The integer value; only meaningful when is_integral().
  constexpr int64_t to_int() const { return int_; }
  constexpr double to_double() const { return integral_ ? static_cast<double>(int_) : double_; }

 private:
  bool integral_;
  int64_t int_ = 0;
  double double_ = 0.0;
};

}  // namespace et_ops

#endif  // ET_OPS_SCALAR_H
