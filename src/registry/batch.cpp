// Building a batch: one pass to size the block, one to fill it.
#include "registry/batch.h"

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "et_ops/schema.h"
#include "registry/fault_injection.h"
#include "registry/name_hash.h"

namespace et_ops::detail {
namespace {

constexpr std::size_t align_up(std::size_t n, std::size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Where each part of the block starts.
struct Layout {
  std::size_t records = 0, keys = 0, text = 0, total = 0;
};

// Sizes the block; `lengths` gets each record's op, schema and fingerprint
// lengths, so the fill pass measures nothing again.
Layout layout_of(const et_ops_manifest& m, std::string_view library_path, std::size_t key_count,
                 std::vector<std::size_t>& lengths) {
  std::size_t text = std::strlen(m.component) + (m.version ? std::strlen(m.version) : 0) + library_path.size();
  lengths.resize(3 * m.record_count);
  for (std::size_t i = 0; i < m.record_count; ++i) {
    const et_ops_kernel_record_v2 record = manifest_record(m, i);
      const et_ops_kernel_record& r = record.base;
    lengths[3 * i] = std::strlen(r.op);
    lengths[3 * i + 1] = std::strlen(r.schema);
    lengths[3 * i + 2] = std::strlen(r.fingerprint);
    text += lengths[3 * i] + lengths[3 * i + 1] + lengths[3 * i + 2];
    if (*r.key != '\0') text += KernelKey::parse(r.key)->text().size();
  }
  Layout layout;
  layout.records = align_up(sizeof(Batch), alignof(Record));
  layout.keys = align_up(layout.records + m.record_count * sizeof(Record), alignof(KernelKey));
  layout.text = layout.keys + key_count * sizeof(KernelKey);
  layout.total = layout.text + text;
  return layout;
}

// What a record's schema says about its arguments. Kernels of one library
// often share their argument list (the .out overloads of one family), so
// the last list read is remembered and its summary reused.
class SchemaSummaries {
 public:
  SchemaSummary of(std::string_view schema) {
    SchemaReader reader(schema);
    if (!reader.ok()) return SchemaSummary{reader.error(), reader.error_offset(), 0, 0};
    if (have_last_ && reader.unread() == last_arguments_) return last_;
    last_arguments_ = reader.unread();
    last_ = summarize_schema(reader);
    have_last_ = true;
    return last_;
  }

 private:
  bool have_last_ = false;
  std::string_view last_arguments_;
  SchemaSummary last_;
};

// Appends text to the block's text area.
class TextWriter {
 public:
  explicit TextWriter(char* at) : at_(at) {}
  std::string_view write(const char* text, std::size_t size) {
    std::memcpy(at_, text, size);
    std::string_view view(at_, size);
    at_ += size;
    return view;
  }
  std::string_view write(std::string_view text) { return write(text.data(), text.size()); }
  std::string_view write(const char* text) { return write(text, std::strlen(text)); }

 private:
  char* at_;
};

}  // namespace

Batch* make_batch(const et_ops_manifest& m, std::string_view library_path, uint64_t first_sequence,
                  std::vector<std::size_t>& lengths) {
  std::size_t key_count = 0;
  for (std::size_t i = 0; i < m.record_count; ++i) key_count += *manifest_record(m, i).base.key != '\0';
  const Layout layout = layout_of(m, library_path, key_count, lengths);
  maybe_inject_allocation_failure();
  char* block = static_cast<char*>(::operator new(layout.total));
  auto* batch = new (block) Batch();
  batch->records = reinterpret_cast<Record*>(block + layout.records);
  batch->keys = reinterpret_cast<KernelKey*>(block + layout.keys);
  TextWriter text(block + layout.text);
  batch->component = text.write(m.component);
  batch->version = text.write(m.version ? m.version : "");
  batch->library_path = text.write(library_path);
  SchemaSummaries summaries;
  try {
    for (std::size_t i = 0; i < m.record_count; ++i) {
      const et_ops_kernel_record_v2 record = manifest_record(m, i);
      const et_ops_kernel_record& r = record.base;
      // Every field written once (a value-initialised Record would be
      // zeroed first, which costs as much as the rest of the record).
      const std::string_view op = text.write(r.op, lengths[3 * i]);
      const std::string_view schema = text.write(r.schema, lengths[3 * i + 1]);
      const std::string_view fingerprint = text.write(r.fingerprint, lengths[3 * i + 2]);
      const KernelKey* key = nullptr;
      std::string_view key_text;
      if (*r.key != '\0') {
        key = new (&batch->keys[batch->key_count]) KernelKey(*KernelKey::parse(r.key));
        ++batch->key_count;
        key_text = text.write(key->text());
      }
      // A schema that does not parse gives no argument information; the
      // registry accepts it (only the kernel library kit insists). Read
      // from the manifest, not the copy just written: reading freshly
      // stored bytes stalls on store forwarding.
      const SchemaSummary summary = summaries.of(std::string_view(r.schema, lengths[3 * i + 1]));
      const bool known = summary.ok() && summary.argument_count <= 64;
      const uint64_t hash = hash_name(std::string_view(r.op, lengths[3 * i]));  // the manifest's, too
      const et_ops_prepared_kernel* prepared = record.kind == ET_OPS_KERNEL_PREPARED ? record.prepared : nullptr;
      new (&batch->records[i]) Record{op, key_text, schema, fingerprint, hash, r.fn, key, prepared,
                                      known ? static_cast<int32_t>(summary.argument_count) : -1,
                                      known ? summary.written : 0, batch, first_sequence + i};
      batch->record_count = i + 1;
    }
  } catch (...) {
    destroy_batch(batch);
    throw;
  }
  return batch;
}

void destroy_batch(Batch* batch) {
  if (batch == nullptr) return;
  for (std::size_t i = 0; i < batch->key_count; ++i) batch->keys[i].~KernelKey();
  batch->~Batch();  // Records are trivially destructible
  ::operator delete(static_cast<void*>(batch));
}

}  // namespace et_ops::detail
