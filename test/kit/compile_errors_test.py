#!/usr/bin/env python3
"""Kernel signatures the kit refuses at compile time: a constexpr definition
whose signature does not match its schema (the error names
kernel_signature_does_not_match_its_schema), a parameter type that no schema
type maps to, and a kernel that does not return bool. The same file with a
matching signature compiles, so each failure is the one named.

Usage: compile_errors_test.py CXX [CXXFLAGS...]
"""
import subprocess
import sys
import tempfile

PROLOGUE = """
#include <et_ops/kernel_library.h>
namespace {
"""

CASES = [
    ("a matching constexpr definition compiles",
     "bool scale(et_ops::KernelContext& c, et_ops::TensorRef, double, et_ops::TensorRef) { return c.ok(); }\n"
     "constexpr auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor self, float f, *, Tensor(a!) out) -> ()\");\n",
     None),
    ("a parameter of the wrong type in a constexpr definition",
     "bool scale(et_ops::KernelContext& c, et_ops::TensorRef, int64_t, et_ops::TensorRef) { return c.ok(); }\n"
     "constexpr auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor self, float f, *, Tensor(a!) out) -> ()\");\n",
     "kernel_signature_does_not_match_its_schema"),
    ("a missing parameter in a constexpr definition",
     "bool scale(et_ops::KernelContext& c, et_ops::TensorRef) { return c.ok(); }\n"
     "constexpr auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor self, float f, *, Tensor(a!) out) -> ()\");\n",
     "kernel_signature_does_not_match_its_schema"),
    ("a schema that does not parse in a constexpr definition",
     "bool scale(et_ops::KernelContext& c, et_ops::TensorRef) { return c.ok(); }\n"
     "constexpr auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor) -> ()\");\n",
     "kernel_signature_does_not_match_its_schema"),
    ("a parameter type no schema type maps to",
     "bool scale(et_ops::KernelContext& c, et_ops::TensorRef, float, et_ops::TensorRef) { return c.ok(); }\n"
     "const auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor self, float f, *, Tensor(a!) out) -> ()\");\n",
     "a parameter of fn has a type that no schema type maps to"),
    ("a kernel that does not return bool",
     "void scale(et_ops::KernelContext&, et_ops::TensorRef) {}\n"
     "const auto k = et_ops::kernel<&scale>(\"t::scale.out(Tensor self) -> ()\");\n",
     "fn must be a function bool fn(et_ops::KernelContext&, ...)"),
]


def main():
    compiler = sys.argv[1:]
    failures = 0
    for what, body, expected in CASES:
        source = PROLOGUE + body + "}  // namespace\nint main() { return k.fn == nullptr; }\n"
        with tempfile.NamedTemporaryFile("w", suffix=".cpp") as f:
            f.write(source)
            f.flush()
            result = subprocess.run(compiler + ["-fsyntax-only", f.name], capture_output=True, text=True)
        if expected is None:
            ok = result.returncode == 0
        else:
            ok = result.returncode != 0 and expected in result.stderr
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        if not ok:
            failures += 1
            print(result.stderr[-3000:])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
