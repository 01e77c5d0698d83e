/* et_ops stable C ABI.
 *
 * Everything that crosses a shared-object boundary between a kernel library
 * and the registry in libet_ops.so is a plain, versioned C struct declared
 * here, so a kernel library built by another compiler, or against another
 * copy of these headers, can still register into the process registry. The
 * C++ API (registry.h, tensor.h, ...) is a convenience layer on top.
 *
 * Versioning: a manifest carries ET_OPS_ABI_VERSION and the size of the
 * record struct it was built with; the registry refuses versions it does not
 * know and reads only the fields that the stated record size contains.
 * Fields are only ever appended; a new kind of record (one that an older
 * registry must not mistake for a plain kernel) comes with a new version,
 * which older registries refuse.
 */
#ifndef ET_OPS_ABI_H
#define ET_OPS_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "et_ops/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1: the manifest's records are et_ops_kernel_record, all plain
 * kernels. Version 2 (ET_OPS_ABI_VERSION_PREPARED): they are
 * et_ops_kernel_record_v2, each saying whether it is a plain or a prepared
 * kernel. Registries accept both. */
#define ET_OPS_ABI_VERSION 1u
#define ET_OPS_ABI_VERSION_PREPARED 2u

/* Element types of tensors. The numeric values are part of the ABI. */
typedef enum et_ops_dtype {
  ET_OPS_DTYPE_FLOAT32 = 0,
  ET_OPS_DTYPE_FLOAT64 = 1,
  ET_OPS_DTYPE_FLOAT16 = 2,
  ET_OPS_DTYPE_BFLOAT16 = 3,
  ET_OPS_DTYPE_INT8 = 4,
  ET_OPS_DTYPE_UINT8 = 5,
  ET_OPS_DTYPE_INT16 = 6,
  ET_OPS_DTYPE_UINT16 = 7,
  ET_OPS_DTYPE_INT32 = 8,
  ET_OPS_DTYPE_INT64 = 9,
  ET_OPS_DTYPE_BOOL = 10
} et_ops_dtype;

#define ET_OPS_DTYPE_COUNT 11

/* Tensors never have more dimensions than this. */
#define ET_OPS_MAX_DIMS 16

/* A tensor as kernels see it: metadata plus a pointer to the elements.
 * `dim_order[i]` is the i-th dimension from outermost to innermost in
 * memory; `strides` are in elements and always consistent with it. */
typedef struct et_ops_tensor {
  void* data;
  const int64_t* sizes;
  const int64_t* strides;
  const uint8_t* dim_order;
  int64_t numel;
  int32_t dtype; /* et_ops_dtype */
  int32_t dim;
} et_ops_tensor;

typedef enum et_ops_value_tag {
  ET_OPS_VALUE_NONE = 0,
  ET_OPS_VALUE_INT = 1,
  ET_OPS_VALUE_DOUBLE = 2,
  ET_OPS_VALUE_BOOL = 3,
  ET_OPS_VALUE_SCALAR_TYPE = 4,
  ET_OPS_VALUE_INT_LIST = 5,
  ET_OPS_VALUE_TENSOR = 6,
  ET_OPS_VALUE_TENSOR_LIST = 7,
  ET_OPS_VALUE_STRING = 8,
  ET_OPS_VALUE_OPTIONAL_TENSOR_LIST = 9
} et_ops_value_tag;

typedef struct et_ops_int_list {
  const int64_t* data;
  int64_t size;
} et_ops_int_list;

/* A schema `Tensor[]` argument: `size` tensors, in order. */
typedef struct et_ops_tensor_list {
  et_ops_tensor* const* data;
  int64_t size;
} et_ops_tensor_list;

/* A schema `str` argument: `size` bytes of UTF-8, not NUL-terminated. */
typedef struct et_ops_string {
  const char* data;
  int64_t size;
} et_ops_string;

/* One argument of an operator call. A schema `Tensor?[]` argument is an
 * ET_OPS_VALUE_OPTIONAL_TENSOR_LIST whose `tensor_list` elements may be NULL
 * (None). */
typedef struct et_ops_value {
  int32_t tag; /* et_ops_value_tag */
  int32_t reserved;
  union {
    int64_t i;
    double d;
    int64_t b;           /* bool: 0 or 1 */
    int64_t scalar_type; /* et_ops_dtype */
    et_ops_int_list int_list;
    et_ops_tensor* tensor;
    et_ops_tensor_list tensor_list; /* also ET_OPS_VALUE_OPTIONAL_TENSOR_LIST */
    et_ops_string string;
  } u;
} et_ops_value;

#define ET_OPS_MESSAGE_CAPACITY 1024

struct et_ops_run_environment;

/* Where a kernel reports an error. A kernel that fails sets `failed` and
 * writes a NUL-terminated message; it never aborts.
 *
 * `environment` (present when struct_size covers it: contexts of runtimes
 * before 0.2 end at `message`) is the running run state's environment, its
 * thread pool, for a plain kernel that splits its work; NULL when the
 * kernel is called outside a run state's run. Prepared kernels get it as
 * their run's argument. */
typedef struct et_ops_kernel_context {
  uint32_t struct_size;
  int32_t failed;
  char message[ET_OPS_MESSAGE_CAPACITY];
  const struct et_ops_run_environment* environment;
} et_ops_kernel_context;

/* Every kernel has this signature: the arguments in schema order, out
 * arguments last. */
typedef void (*et_ops_kernel_fn)(et_ops_kernel_context* context, et_ops_value* const* args,
                                 size_t arg_count);

/* ---- prepared kernels (ABI version 2) ----
 *
 * A prepared kernel does once, when a program loads, what does not depend on
 * the run: packing weights, choosing a microkernel, computing requantization
 * multipliers. Its `prepare` function sees the instruction's arguments as the
 * program gives them: constant tensors with their data, other tensors with
 * their dtype, sizes and dim order but `data` NULL. What it returns lives with
 * the loaded program and is passed, read-only, to every run. A run state may
 * also hold a mutable part of its own (`instantiate`, made when the run state
 * is made), and runs get the run state's thread pool. */

/* What a run passes to a prepared kernel besides its arguments. */
typedef struct et_ops_run_environment {
  uint32_t struct_size;
  uint32_t thread_count; /* threads of the run state's pool, >= 1 */
  void* threadpool;      /* the run state's pthreadpool_t; NULL when thread_count is 1 */
} et_ops_run_environment;

/* Returns the prepared state, or NULL after setting context->failed. A kernel
 * that needs no state returns any non-NULL pointer its release accepts. */
typedef void* (*et_ops_prepare_fn)(et_ops_kernel_context* context, et_ops_value* const* args, size_t arg_count);
/* The run state's mutable part, made when a run state is made: `args` are that
 * state's arguments (data pointers included; they stay the same for every run
 * of the state). NULL after setting context->failed. */
typedef void* (*et_ops_instantiate_fn)(et_ops_kernel_context* context, const void* prepared,
                                       et_ops_value* const* args, size_t arg_count);
typedef void (*et_ops_release_fn)(void* state);
typedef void (*et_ops_prepared_run_fn)(et_ops_kernel_context* context, const void* prepared, void* instance,
                                       const et_ops_run_environment* environment, et_ops_value* const* args,
                                       size_t arg_count);

typedef struct et_ops_prepared_kernel {
  uint32_t struct_size; /* sizeof(et_ops_prepared_kernel) of the builder */
  uint32_t reserved;
  et_ops_prepare_fn prepare;
  et_ops_release_fn release_prepared;
  et_ops_instantiate_fn instantiate; /* NULL: no per-run-state part (instance is NULL) */
  et_ops_release_fn release_instance;
  et_ops_prepared_run_fn run;
} et_ops_prepared_kernel;

typedef enum et_ops_kernel_kind {
  ET_OPS_KERNEL_PLAIN = 0,   /* fn is the kernel */
  ET_OPS_KERNEL_PREPARED = 1 /* `prepared` holds the kernel */
} et_ops_kernel_kind;

/* One registration record. `key` is "" for the fallback kernel, or an
 * encoded kernel key (see et_ops::KernelKey) for a specialised one. */
typedef struct et_ops_kernel_record {
  const char* op;
  const char* key;
  et_ops_kernel_fn fn;
  const char* schema;
  const char* fingerprint;
} et_ops_kernel_record;

/* A record of a version 2 manifest: a plain kernel (`prepared` NULL) or a
 * prepared one, whose base.fn still works alone (it prepares, runs on one
 * thread and releases in one call). */
typedef struct et_ops_kernel_record_v2 {
  et_ops_kernel_record base;
  uint32_t kind; /* et_ops_kernel_kind */
  uint32_t reserved;
  const et_ops_prepared_kernel* prepared; /* ET_OPS_KERNEL_PREPARED only; must outlive the registration */
} et_ops_kernel_record_v2;

/* What a kernel library provides. The registry copies what it keeps: a
 * manifest need only stay valid until et_ops_register_manifest returns.
 * `records` points at et_ops_kernel_record_v2 records in a version 2
 * manifest (their first member is the plain record). */
typedef struct et_ops_manifest {
  uint32_t abi_version; /* ET_OPS_ABI_VERSION, or ET_OPS_ABI_VERSION_PREPARED */
  uint32_t record_size; /* sizeof(et_ops_kernel_record), or of et_ops_kernel_record_v2, of the builder */
  const char* component;
  const char* version;
  const et_ops_kernel_record* records;
  size_t record_count;
} et_ops_manifest;

/* Record i of a manifest: records are record_size apart (a version 2
 * record holds more than the plain record it starts with). */
static inline const et_ops_kernel_record* et_ops_manifest_record(const et_ops_manifest* m, size_t i) {
  return (const et_ops_kernel_record*)((const char*)m->records + i * m->record_size);
}

typedef enum et_ops_status {
  ET_OPS_OK = 0,
  ET_OPS_ERROR_CONFLICT = 1,  /* first-wins rejected a batch with different copies */
  ET_OPS_ERROR_INVALID = 2,   /* malformed manifest, unknown ABI version, ... */
  ET_OPS_ERROR_POLICY = 3,    /* invalid ET_OPS_DUPLICATE_POLICY */
  ET_OPS_ERROR_NO_MEMORY = 4  /* allocation failed; the registry is unchanged */
} et_ops_status;

typedef struct et_ops_registration_result {
  int32_t status; /* et_ops_status */
  uint32_t registered;   /* records added by this batch */
  uint32_t deduplicated; /* identical copies kept as shadows (first-wins) */
  uint32_t unchanged;    /* records already registered with the same function */
  char* message; /* NULL on success; free with et_ops_string_free */
} et_ops_registration_result;

/* Registers a whole manifest, atomically. The origin library path is found
 * with dladdr() from the records' function addresses. */
ET_OPS_API et_ops_registration_result et_ops_register_manifest(const et_ops_manifest* manifest);

/* Removes every record whose origin is the shared object at `library_path`
 * (as reported by dladdr). Returns the number of records removed. */
ET_OPS_API size_t et_ops_unregister_library(const char* library_path);

/* The fallback kernel of `op`, or NULL. */
ET_OPS_API et_ops_kernel_fn et_ops_lookup_fallback(const char* op);

ET_OPS_API void et_ops_string_free(char* message);

/* The one entry point a dynamically loadable kernel library exports. It
 * returns the library's manifest without registering anything. */
#define ET_OPS_KERNEL_LIBRARY_ENTRY_POINT "et_ops_kernel_library_manifest"
typedef const et_ops_manifest* (*et_ops_kernel_library_entry_fn)(void);

/* Optional. When the entry point returns NULL, a library may say why with
 * this function (a kernel whose signature does not match its schema, say);
 * loaders report its message. */
#define ET_OPS_KERNEL_LIBRARY_ERROR_ENTRY_POINT "et_ops_kernel_library_error"
typedef const char* (*et_ops_kernel_library_error_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* ET_OPS_ABI_H */
