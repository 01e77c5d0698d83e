#include "dump.h"

#include <fmt/format.h>
#include <fmt/os.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "et_ops/npy.h"
#include "layers.h"
#include "onednn.h"
#include "xnnpack.h"

namespace int8_engines {
namespace {

nlohmann::json describe(const Layer& layer) {
  return {{"id", layer.id()},
          {"network", layer.network},
          {"module", layer.module},
          {"count", layer.count},
          {"kind", layer.kind == Kind::kConv ? "conv" : "linear"},
          {"in_channels", layer.in_channels},
          {"out_channels", layer.out_channels},
          {"kernel", layer.kernel},
          {"stride", layer.stride},
          {"padding", layer.padding},
          {"groups", layer.groups},
          {"in_size", layer.in_size},
          {"out_size", layer.out_size()},
          {"macs", layer.macs()}};
}

template <typename T>
bool write(const std::string& path, et_ops::DType dtype, const std::vector<T>& values,
           std::vector<int64_t> shape) {
  const et_ops::Tensor tensor(dtype, const_cast<T*>(values.data()), std::move(shape));
  const et_ops::Status written = et_ops::write_npy(path, tensor.ref());
  if (written) return true;
  fmt::print(stderr, "cannot write {}: {}\n", path, written.message());
  return false;
}

}  // namespace

void print_layers() {
  nlohmann::json table = nlohmann::json::array();
  for (const Layer& layer : layers()) table.push_back(describe(layer));
  fmt::print("{}\n", table.dump(1));
}

bool dump_outputs(const std::string& directory) {
  using et_ops::DType;
  nlohmann::json manifest = {{"onednn_isa", onednn_isa()}, {"cases", nlohmann::json::array()}};
  const std::unique_ptr<pthreadpool, decltype(&pthreadpool_destroy)> pool(pthreadpool_create(2), pthreadpool_destroy);
  pthreadpool_t two_threads = pool.get();
  int index = 0;
  for (const Layer& layer : layers()) {
    for (WeightScales scales : {WeightScales::kPerTensor, WeightScales::kPerChannel}) {
      const LayerData d = make_layer_data(layer, scales);
      const std::string prefix = fmt::format("{}/{:02d}_{}_", directory, index++, name_of(scales));
      const int64_t c = layer.in_channels, o = layer.out_channels, k = layer.kernel;
      const int64_t in = layer.in_size, out = layer.out_size();
      bool ok = write(prefix + "input.npy", DType::UInt8, d.input_nchw, {1, c, in, in}) &&
                write(prefix + "weight.npy", DType::Int8, d.weight_oihw, {o, c / layer.groups, k, k}) &&
                write(prefix + "bias.npy", DType::Int32, d.bias, {o});
      nlohmann::json outputs = nlohmann::json::object();
      auto save = [&](const std::string& engine, const std::vector<uint8_t>& values) {
        ok = ok && write(prefix + engine + ".npy", DType::UInt8, values, {1, o, out, out});
        outputs[engine] = prefix + engine + ".npy";
      };
      std::vector<XnnpackType> xnnpack_types{XnnpackType::kQc8};
      if (scales == WeightScales::kPerTensor) xnnpack_types = {XnnpackType::kQs8, XnnpackType::kQu8, XnnpackType::kQc8};
      for (XnnpackType type : xnnpack_types) {
        XnnpackConv conv(layer, d, type, nullptr);
        conv.run();
        save(std::string("xnnpack_") + name_of(type), conv.output_nchw());
      }
      std::string implementation;
      for (OnednnLayout layout : {OnednnLayout::kNhwc, OnednnLayout::kBlocked}) {
        OnednnConv conv(layer, d, layout);
        conv.run();
        save(std::string("onednn_") + name_of(layout), conv.output_nchw());
        implementation += (implementation.empty() ? "" : ", ") + conv.implementation();
      }
      // The same with two threads, which must not change a byte.
      XnnpackConv xnnpack_two(layer, d, xnnpack_types[0], two_threads);
      xnnpack_two.run();
      save(std::string("xnnpack_") + name_of(xnnpack_types[0]) + "_2_threads", xnnpack_two.output_nchw());
      onednn_set_threads(2);
      OnednnConv onednn_two(layer, d, OnednnLayout::kNhwc);
      onednn_two.run();
      onednn_set_threads(1);
      save("onednn_nhwc_2_threads", onednn_two.output_nchw());
      if (!ok) return false;
      manifest["cases"].push_back({{"layer", describe(layer)},
                                   {"weight_scales", name_of(scales)},
                                   {"input", prefix + "input.npy"},
                                   {"weight", prefix + "weight.npy"},
                                   {"bias", prefix + "bias.npy"},
                                   {"input_scale", d.input_scale},
                                   {"input_zero_point", d.input_zero_point},
                                   {"weight_scales_values", d.weight_scales},
                                   {"output_scale", d.output_scale},
                                   {"output_zero_point", d.output_zero_point},
                                   {"onednn_implementations", implementation},
                                   {"outputs", outputs}});
    }
  }
  auto file = fmt::output_file(directory + "/manifest.json");
  file.print("{}\n", manifest.dump(1));
  return true;
}

}  // namespace int8_engines
