// Building a batch: one pass to measure the records and size the block,
// one to fill it.
#include "registry/batch.h"

#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "et_ops/schema.h"
#include "registry/fault_injection.h"
#include "registry/name_hash.h"

namespace et_ops::detail {
namespace {

constexpr std::size_t align_up(std::size_t n, std::size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// Where each part of the block starts. Records refer to the parts after
// them by 32-bit offsets, so a block stays under 4 GiB.
struct Layout {
  std::size_t keys = 0, tails = 0, text = 0, total = 0;
};

// Measures every record (one strlen per string, one read of the schema's
// operator name), hashes its operator, decides which tails are new, and
// sizes the block. Sizes are kept in 32 bits: the block's total, counted
// in full, stays under 4 GiB, so each of them does too.
Layout measure(const et_ops_manifest& m, std::string_view library_path, std::vector<MeasuredRecord>& measured) {
  std::size_t text = std::strlen(m.component) + (m.version ? std::strlen(m.version) : 0) + library_path.size();
  std::size_t keys = 0, tails = 0;
  measured.resize(m.record_count);
  std::string_view last_tail;
  bool last_named = false;
  for (std::size_t i = 0; i < m.record_count; ++i) {
    const et_ops_kernel_record& r = manifest_record(m, i);
    const std::string_view schema(r.schema, std::strlen(r.schema));
    const std::size_t fingerprint_size = std::strlen(r.fingerprint);
    const SchemaReader reader(schema);
    // Comparing the operator with the schema's name measures it too.
    const std::string_view name = reader.operator_name();
    const bool named = reader.ok() && std::strncmp(r.op, name.data(), name.size()) == 0 && r.op[name.size()] == '\0';
    const std::string_view op(r.op, named ? name.size() : std::strlen(r.op));
    const std::string_view tail = named ? schema.substr(op.size()) : schema;
    const bool new_tail = i == 0 || named != last_named || tail != last_tail;
    if (new_tail) {
      ++tails;
      text += tail.size();
      last_tail = tail;
      last_named = named;
    }
    text += op.size() + fingerprint_size;
    if (manifest_prepared(m, i) != nullptr) text += 7 + sizeof(const et_ops_prepared_kernel*);  // aligned
    if (*r.key != '\0') {
      ++keys;
      text += KernelKey::parse(r.key)->text().size();
    }
    measured[i] = MeasuredRecord{static_cast<uint32_t>(op.size()), static_cast<uint32_t>(fingerprint_size),
                                 hash_name(op), named, new_tail};
  }
  Layout layout;
  layout.keys = align_up(kBatchRecordsOffset + m.record_count * sizeof(Record), alignof(BatchKey));
  layout.tails = align_up(layout.keys + keys * sizeof(BatchKey), alignof(SchemaTail));
  layout.text = layout.tails + tails * sizeof(SchemaTail);
  layout.total = layout.text + text;
  if (layout.total > std::numeric_limits<uint32_t>::max()) throw std::bad_alloc();
  return layout;
}

}  // namespace

// Fills a measured block, each record written once (a value-initialised
// Record would be zeroed first, which costs as much as the rest of it).
class BatchBuilder {
 public:
  BatchBuilder(char* block, const Layout& layout)
      : batch_(new (block) Batch()),
        tails_(reinterpret_cast<SchemaTail*>(block + layout.tails)),
        text_(block + layout.text) {
    batch_->keys = reinterpret_cast<BatchKey*>(block + layout.keys);
  }

  Batch* batch() const { return batch_; }

  std::string_view write(const char* text, std::size_t size) {
    std::memcpy(text_, text, size);
    std::string_view view(text_, size);
    text_ += size;
    return view;
  }
  std::string_view write(std::string_view text) { return write(text.data(), text.size()); }
  // A pointer, at the next 8-aligned place (records and the block are 8-aligned).
  void write_aligned(const et_ops_prepared_kernel* pointer) {
    text_ = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(text_) + 7) / 8 * 8);
    std::memcpy(text_, &pointer, sizeof pointer);
    text_ += sizeof pointer;
  }

  // Record i, from the manifest's bytes (reading back the copy just
  // written would stall on store forwarding).
  void add_record(std::size_t i, const et_ops_kernel_record& r, const et_ops_prepared_kernel* prepared,
                  const MeasuredRecord& x) {
    Record* record = batch_->records() + i;
    const std::string_view op = write(r.op, x.op_size);
    write(r.fingerprint, x.fingerprint_size);  // right after the operator's name
    if (prepared != nullptr) write_aligned(prepared);
    if (x.new_tail) add_tail(r.schema, x);
    const BatchKey* key = *r.key != '\0' ? add_key(r.key) : nullptr;
    new (record) Record(r.fn, static_cast<uint32_t>(i), offset(record, op.data()), x.op_size, x.fingerprint_size,
                        offset(record, tail_), x.named_schema, prepared != nullptr, key ? offset(record, key) : 0);
  }

 private:
  static uint32_t offset(const Record* from, const void* to) {
    return static_cast<uint32_t>(static_cast<const char*>(to) - reinterpret_cast<const char*>(from));
  }

  // A schema that does not parse gives no argument information; the
  // registry accepts it (only the kernel library kit insists).
  // What a record keeps of its schema: the text after the operator's name
  // when the schema starts with it, else all of it.
  void add_tail(const char* text, const MeasuredRecord& x) {
    const std::string_view schema(text, std::strlen(text));
    const SchemaSummary summary = summarize_schema(schema);
    const bool known = summary.ok() && summary.argument_count <= 64;
    tail_ = new (tails_++) SchemaTail{write(x.named_schema ? schema.substr(x.op_size) : schema),
                                      known ? static_cast<int32_t>(summary.argument_count) : -1,
                                      known ? summary.written : 0};
  }

  const BatchKey* add_key(const char* text) {
    BatchKey* key = new (&batch_->keys[batch_->key_count]) BatchKey{*KernelKey::parse(text), {}};
    ++batch_->key_count;  // constructed: destroy_batch destroys it
    key->text = write(key->key.text());
    return key;
  }

  Batch* batch_;
  SchemaTail* tails_;
  const SchemaTail* tail_ = nullptr;  // the current tail
  char* text_;
};

Batch* make_batch(const et_ops_manifest& m, std::string_view library_path, uint64_t first_sequence,
                  std::vector<MeasuredRecord>& measured) {
  const Layout layout = measure(m, library_path, measured);
  maybe_inject_allocation_failure();
  BatchBuilder builder(static_cast<char*>(::operator new(layout.total)), layout);
  Batch* batch = builder.batch();
  batch->component = builder.write(m.component, std::strlen(m.component));
  batch->version = m.version ? builder.write(m.version, std::strlen(m.version)) : std::string_view();
  batch->library_path = builder.write(library_path);
  batch->first_sequence = first_sequence;
  try {
    for (std::size_t i = 0; i < m.record_count; ++i)
      builder.add_record(i, manifest_record(m, i), manifest_prepared(m, i), measured[i]);
  } catch (...) {
    destroy_batch(batch);
    throw;
  }
  batch->record_count = m.record_count;
  return batch;
}

void destroy_batch(Batch* batch) {
  if (batch == nullptr) return;
  for (std::size_t i = 0; i < batch->key_count; ++i) batch->keys[i].~BatchKey();
  batch->~Batch();  // records and tails are trivially destructible
  ::operator delete(static_cast<void*>(batch));
}

std::string Record::schema() const {
  std::string text(named_schema() ? op() : std::string_view());
  text += tail().text;
  return text;
}

bool Record::same_schema(const Record& other) const {
  if (named_schema() == other.named_schema() && (!named_schema() || op() == other.op()))
    return tail().text == other.tail().text;
  return schema() == other.schema();
}

}  // namespace et_ops::detail
