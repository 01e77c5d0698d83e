"""The operator tables are the one place operators are named (scripts/operator_table.py).

- No literal operator name outside the tables: C++ sources (src/, include/,
  tools/, the fuzz targets) and the Python package name operators through
  the generated constants (op_name::KERNEL in C++, et_ops._operators in
  Python). Tests and docs may name operators.
- The generator: typed entry points and rows follow a selection; a selection
  naming an operator no table has is refused; program files select their
  operators.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("ET_OPS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "scripts", "operator_table.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import operator_table  # noqa: E402

SETS = ("portable", "quantized", "xnnpack")
TABLES = [f"{name}={os.path.join(ROOT, 'src', 'kernels', name, 'operators.def')}" for name in SETS]


def table_namespaces():
    namespaces = set()
    for table in TABLES:
        for function, schema, _ in operator_table.read_table(table.split("=", 1)[1]):
            namespaces.add(operator_table.parse_schema(schema, function)[0].split("::")[0])
    return namespaces


def sources():
    """The files that must name operators through the tables."""
    roots = [("src", (".cpp", ".h", ".in")), ("include", (".h",)), ("tools", (".cpp", ".h")),
             ("test/fuzz", (".cpp", ".h")), ("python/et_ops", (".py",))]
    for root, suffixes in roots:
        for directory, _, files in os.walk(os.path.join(ROOT, root)):
            for name in files:
                if name.endswith(suffixes):
                    yield os.path.join(directory, name)


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


class LiteralNames(unittest.TestCase):
    def test_no_operator_name_outside_the_tables(self):
        namespaces = "|".join(sorted(table_namespaces()))
        literal = re.compile(r"[\"'](?:%s)::\w+(?:\.\w+)?[\"']" % namespaces)
        found = []
        for path in sources():
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if literal.search(line):
                        found.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
        self.assertEqual(found, [], "operator names typed outside src/kernels/*/operators.def; use op_name::KERNEL "
                                    "(C++) or et_ops._operators (Python):\n" + "\n".join(found))

    def test_the_scan_sees_a_literal(self):
        namespaces = "|".join(sorted(table_namespaces()))
        literal = re.compile(r"[\"'](?:%s)::\w+(?:\.\w+)?[\"']" % namespaces)
        self.assertTrue(literal.search('constexpr const char* kOp = "aten::relu.out";'))
        self.assertTrue(literal.search("Q = 'quantized_decomposed::quantize_per_tensor.out'"))
        self.assertFalse(literal.search("``aten::view_copy.out`` in a docstring"))


class Generator(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def path(self, name):
        return os.path.join(self.directory.name, name)

    def test_a_selection_keeps_its_rows_and_entry_points(self):
        with open(self.path("ops.txt"), "w") as f:
            f.write("# the MLP's operators\naten::relu.out\naten::linear.out\n")
        portable = TABLES[0].split("=", 1)[1]
        result = run("header", "--set", "portable", "--table", portable, "--entry-points", "yes",
                     "--selection", self.path("ops.txt"), "--output", self.path("portable_operators.h"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.path("portable_operators.h")) as f:
            header = f.read()
        self.assertIn("ET_OPS_KERNELS_API bool relu_out(KernelContext& ctx, TensorRef self, TensorRef out);", header)
        self.assertIn("std::optional<TensorRef> bias", header)
        self.assertNotIn("bool add_out(", header)
        self.assertIn('inline constexpr const char add_out[] = "aten::add.out";', header)  # names stay
        result = run("rows", "--table", portable, "--selection", self.path("ops.txt"), "--output", self.path("rows"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.path("rows")) as f:
            rows = [line for line in f if line.startswith("ET_OPS_OPERATOR")]
        self.assertEqual([row.split(",")[0] for row in rows], ["ET_OPS_OPERATOR(relu_out", "ET_OPS_OPERATOR(linear_out"])

    def test_a_selection_of_an_unknown_operator_is_refused(self):
        with open(self.path("ops.txt"), "w") as f:
            f.write("aten::relu.out\naten::no_such.out\n")
        result = run("select", "--selection", self.path("ops.txt"), "--output", self.path("selected"), *TABLES)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("aten::no_such.out", result.stderr)

    def test_a_program_selects_its_operators(self):
        result = run("select", "--program", os.path.join(ROOT, "examples", "qmlp", "qmlp.etp"),
                     "--output", self.path("selected"), *TABLES)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(self.path("selected")) as f:
            self.assertEqual(sorted(f.read().split()),
                             ["aten::linear.out", "aten::relu.out", "quantized_decomposed::dequantize_per_tensor.out",
                              "quantized_decomposed::quantize_per_tensor.out"])

    def test_an_argument_type_without_a_parameter_type_is_named(self):
        with open(self.path("operators.def"), "w") as f:
            f.write('ET_OPS_OPERATOR(f_out, "acme::f.out(Tensor self, Layout layout, *, Tensor(a!) out) -> Tensor(a!)")\n')
        result = run("header", "--set", "acme", "--table", self.path("operators.def"), "--entry-points", "yes",
                     "--output", self.path("acme_operators.h"))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("'layout' has type 'Layout'", result.stderr)


if __name__ == "__main__":
    unittest.main()
