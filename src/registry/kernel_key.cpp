// Kernel keys: text form and matching against the tensors of a call.
#include <fmt/format.h>

#include <charconv>

#include "et_ops/registry.h"

namespace et_ops {
namespace {

std::optional<int64_t> parse_number(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "6;0,1" -> {Int8, {0, 1}}
std::optional<TensorMeta> parse_meta(std::string_view text) {
  auto semicolon = text.find(';');
  if (semicolon == std::string_view::npos) return std::nullopt;
  auto dtype = parse_number(text.substr(0, semicolon));
  if (!dtype || !is_valid_dtype(static_cast<int32_t>(*dtype))) return std::nullopt;
  TensorMeta meta;
  meta.dtype = static_cast<DType>(*dtype);
  std::string_view order = text.substr(semicolon + 1);
  while (!order.empty()) {
    auto comma = order.find(',');
    auto d = parse_number(order.substr(0, comma));
    if (!d || *d < 0 || *d >= ET_OPS_MAX_DIMS) return std::nullopt;
    meta.dim_order.push_back(static_cast<uint8_t>(*d));
    order = comma == std::string_view::npos ? std::string_view() : order.substr(comma + 1);
  }
  return meta;
}

Status invalid_key(std::string_view text, std::string_view why) {
  return Status(StatusCode::Invalid, fmt::format("'{}' is not a kernel key: {}", text, why));
}

}  // namespace

Result<KernelKey> KernelKey::parse(std::string_view text) {
  if (text.empty()) return KernelKey();
  const std::string_view whole = text;
  constexpr std::string_view prefix = "v1/";
  if (text.substr(0, prefix.size()) != prefix) return invalid_key(whole, "it does not start with v1/");
  text.remove_prefix(prefix.size());
  std::vector<TensorMeta> metas;
  while (true) {
    auto bar = text.find('|');
    auto meta = parse_meta(text.substr(0, bar));
    if (!meta)
      return invalid_key(whole, fmt::format("tensor {} ('{}') is not <dtype number>;<dim order>", metas.size(),
                                            text.substr(0, bar)));
    metas.push_back(std::move(*meta));
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return KernelKey(std::move(metas));
}

std::string KernelKey::text() const {
  if (metas_.empty()) return "";
  std::string out = "v1/";
  for (std::size_t i = 0; i < metas_.size(); ++i) {
    if (i) out += '|';
    out += fmt::format("{};{}", static_cast<int32_t>(metas_[i].dtype), fmt::join(metas_[i].dim_order, ","));
  }
  return out;
}

bool KernelKey::matches(const et_ops_tensor* const* tensors, std::size_t count) const {
  if (metas_.size() != count) return false;
  for (std::size_t i = 0; i < count; ++i) {
    const TensorMeta& meta = metas_[i];
    const et_ops_tensor* t = tensors[i];
    if (t == nullptr || t->dtype != static_cast<int32_t>(meta.dtype)) return false;
    if (meta.dim_order.empty()) continue;
    if (static_cast<std::size_t>(t->dim) != meta.dim_order.size()) return false;
    for (int32_t d = 0; d < t->dim; ++d) {
      uint8_t actual = t->dim_order ? t->dim_order[d] : static_cast<uint8_t>(d);
      if (actual != meta.dim_order[d]) return false;
    }
  }
  return true;
}

}  // namespace et_ops
