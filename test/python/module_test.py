"""The et_ops module: loading and running programs, its errors, and the registry.

The programs here are built with et_ops.etp from quantized_decomposed
operators only, so this test needs only the quantized kernels.
"""

import os
import pathlib
import shutil
import signal
import tempfile
import threading
import unittest

from dataclasses import dataclass

import numpy as np

import harness
import et_ops
import et_ops.etp
from et_ops.etp import ProgramBuilder

QUANTIZED_OPERATORS = len(harness.operators_in_def("quantized"))

Q = "quantized_decomposed::"


@dataclass(frozen=True)
class TensorQParams:
    scale: float
    zero_point: int
    quant_min: int
    quant_max: int
    dtype: str


QPARAMS = TensorQParams(scale=0.5, zero_point=1, quant_min=-128, quant_max=127, dtype="int8")
SHAPE = (2, 3)


def quantized_library_path():
    paths = {r["library"] for r in et_ops.registered_operators() if r["component"] == "kernels_quantized"}
    assert len(paths) == 1, paths
    return paths.pop()


def qparam_values(b, q):
    return [b.double(q.scale), b.integer(q.zero_point), b.integer(q.quant_min), b.integer(q.quant_max),
            b.scalar_type(q.dtype)]


def write_qdq_program(path, q=QPARAMS, input_dtype="float32", output_dtype="float32", dim_order=None):
    """x -> quantize_per_tensor -> dequantize_per_tensor; outputs (quantized, dequantized)."""
    b = ProgramBuilder("qdq")
    x = b.tensor(input_dtype, SHAPE, dim_order)
    b.input(x)
    quantized = b.tensor(q.dtype, SHAPE)
    dequantized = b.tensor(output_dtype, SHAPE, dim_order)
    b.instruction(Q + "quantize_per_tensor.out", [x] + qparam_values(b, q) + [quantized])
    b.instruction(Q + "dequantize_per_tensor.out", [quantized] + qparam_values(b, q) + [b.none(), dequantized])
    b.output(quantized)
    b.output(dequantized)
    b.metadata = {"purpose": "module_test"}
    b.write(path)
    return path


def write_program_with_unknown_operator(path, op):
    b = ProgramBuilder("unknown_op")
    x = b.tensor("float32", SHAPE)
    out = b.tensor("float32", SHAPE)
    b.input(x)
    b.instruction(op, [x, out])
    b.output(out)
    b.write(path)
    return path


def sample_input(seed=0):
    return np.random.RandomState(seed).uniform(-70, 70, size=SHAPE).astype(np.float32)


def expected_qdq(x, q=QPARAMS):
    """The kernels' numerics, written independently: quantize_per_tensor and dequantize_per_tensor in float32
    (inv = fl32(1 / scale), rne(x * inv) + zero_point, NaN -> quant_min, clamp; (q - zero_point) * scale)."""
    x = np.asarray(x, dtype=np.float32)
    t = np.rint(x * np.float32(1.0 / q.scale)) + np.float32(q.zero_point)
    t = np.where(np.isnan(t), q.quant_min, t)
    quantized = np.clip(t, q.quant_min, q.quant_max).astype(q.dtype)
    return quantized, (quantized.astype(np.float32) - np.float32(q.zero_point)) * np.float32(q.scale)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_module_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)


class EtpFormatTest(unittest.TestCase):
    """et_ops.etp writes what DESIGN "Program format" specifies and reads it back."""

    def test_preamble_header_and_aligned_constants(self):
        b = ProgramBuilder("format")
        small = b.constant(np.array([1, 2, 3], dtype=np.int8))
        large = b.constant(np.arange(12, dtype=np.float64).reshape(3, 4))
        data = b.to_bytes()
        self.assertEqual(data[:4], b"ETOP")
        self.assertEqual(int.from_bytes(data[4:8], "little"), 1)
        header_size = int.from_bytes(data[8:16], "little")
        program = et_ops.etp.parse_program(data)
        self.assertEqual(program.header["format"], "etp")
        self.assertEqual(program.header["values"][small]["data"], {"offset": 0, "nbytes": 3})
        self.assertEqual(program.header["values"][large]["data"], {"offset": 64, "nbytes": 96})
        self.assertEqual(len(data), (16 + header_size + 63) // 64 * 64 + 64 + 96)
        np.testing.assert_array_equal(program.constants[large], np.arange(12.0).reshape(3, 4))

    def test_scalar_values_are_shared_but_kept_apart_by_type(self):
        b = ProgramBuilder("interning")
        self.assertEqual(b.integer(1), b.integer(1))
        self.assertNotEqual(b.integer(1), b.double(1.0))
        self.assertNotEqual(b.integer(1), b.boolean(True))
        self.assertEqual(b.none(), b.none())

    def test_tensor_list_names_tensor_values(self):
        b = ProgramBuilder("lists")
        x, y, n = b.tensor("float32", [2]), b.constant(np.zeros(2, np.float32)), b.integer(3)
        listed = b.tensor_list([x, y])
        self.assertEqual(b.value(listed), {"type": "tensor_list", "value": [x, y]})
        self.assertEqual(b.tensor_list([x, y]), listed)
        for bad in ([x, n], [x, 99]):
            with self.assertRaises(ValueError):
                b.tensor_list(bad)

    def test_optional_tensor_list_and_string_values(self):
        b = ProgramBuilder("optional lists")
        x, n = b.tensor("int64", [2]), b.integer(3)
        listed = b.optional_tensor_list([None, x])
        self.assertEqual(b.value(listed), {"type": "optional_tensor_list", "value": [None, x]})
        self.assertEqual(b.optional_tensor_list([None, x]), listed)
        with self.assertRaises(ValueError):
            b.optional_tensor_list([n])
        self.assertEqual(b.value(b.string("tanh")), {"type": "string", "value": "tanh"})
        with self.assertRaises(TypeError):
            b.string(3)

    def test_constant_in_another_dim_order_reads_back_logically(self):
        b = ProgramBuilder("dim_order")
        index = b.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
        program = et_ops.etp.parse_program(b.to_bytes())
        value = dict(program.header["values"][index], dim_order=[1, 0])
        stored = np.arange(6, dtype=np.int32).reshape(2, 3).T.tobytes()
        np.testing.assert_array_equal(et_ops.etp._logical_array(stored, value), np.arange(6).reshape(2, 3))

    def test_non_finite_double_is_refused(self):
        b = ProgramBuilder("nan")
        b.double(float("nan"))
        with self.assertRaises(ValueError):
            b.to_bytes()


class LoadTest(TempDirTest):
    def test_describes_the_loaded_program(self):
        path = write_qdq_program(self.path("qdq.etp"))
        program = et_ops.load(pathlib.Path(path))
        self.assertEqual(program.name, "qdq")
        self.assertEqual(program.path, path)
        self.assertEqual(program.operators, [Q + "quantize_per_tensor.out", Q + "dequantize_per_tensor.out"])
        self.assertEqual(program.instruction_count, 2)
        self.assertEqual(program.input_specs, [et_ops.TensorSpec("float32", SHAPE, (0, 1))])
        self.assertEqual([s.dtype for s in program.output_specs], ["int8", "float32"])
        self.assertEqual(program.metadata, {"purpose": "module_test"})
        self.assertGreater(program.planned_memory_bytes, 0)

    def test_repr_says_what_the_program_is(self):
        path = write_qdq_program(self.path("qdq.etp"), dim_order=(1, 0))
        program = et_ops.load(path)
        self.assertEqual(repr(program),
                         f"<et_ops.Program 'qdq' from {path!r}: inputs [float32[2, 3] dim_order [1, 0]], "
                         f"outputs [int8[2, 3], float32[2, 3] dim_order [1, 0]], 2 operators, 2 instructions, "
                         f"{program.planned_memory_bytes} bytes planned>")

    def test_program_file_reads_and_describes_a_file_without_the_runtime(self):
        b = ProgramBuilder("")
        x = b.tensor("float32", [2, 3])
        weight = b.constant(np.arange(6, dtype=np.int8).reshape(2, 3))
        out = b.tensor("float32", [2, 3])
        b.input(x)
        b.instruction("vendor::scale.out", [x, weight, b.double(0.5), b.none(), out])
        b.output(out)
        b.write(self.path("unnamed.etp"))
        program = et_ops.etp.read_program(self.path("unnamed.etp"))
        self.assertEqual(program.name, "")
        self.assertEqual((program.inputs, program.outputs), ([x], [out]))
        self.assertEqual(program.instructions, [{"op": "vendor::scale.out", "args": [x, weight, 3, 4, out]}])
        self.assertEqual(program.describe_value(weight), "int8[2, 3] constant")
        self.assertEqual(program.describe_value(3), "double 0.5")
        self.assertEqual(program.describe_value(4), "none")
        self.assertEqual(repr(program),
                         "<et_ops.etp.ProgramFile '': inputs [float32[2, 3]], outputs [float32[2, 3]], "
                         "5 values (1 constants, 6 bytes), 1 instructions, operators ['vendor::scale.out']>")

    def test_every_public_part_of_programs_has_a_docstring(self):
        for owner in (et_ops.Program, et_ops.TensorSpec, et_ops.etp.ProgramFile):
            self.assertTrue(owner.__doc__ and owner.__doc__.strip(), owner)
            for name, member in vars(owner).items():
                if not name.startswith("_") and (callable(member) or isinstance(member, property)):
                    self.assertTrue(member.__doc__ and member.__doc__.strip(), f"{owner.__name__}.{name}")
        for function in (et_ops.load, et_ops.etp.read_program, et_ops.etp.parse_program):
            self.assertTrue(function.__doc__ and function.__doc__.strip(), function.__name__)

    def test_missing_file_is_a_file_error(self):
        path = self.path("does_not_exist.etp")
        with self.assertRaises(et_ops.LoadError) as caught:
            et_ops.load(path)
        self.assertEqual(caught.exception.kind, "file")
        self.assertEqual(caught.exception.path, path)
        self.assertIn(path, str(caught.exception))

    def assert_format_error(self, data, *fragments):
        path = self.path("corrupt.etp")
        with open(path, "wb") as f:
            f.write(data)
        with self.assertRaises(et_ops.LoadError) as caught:
            et_ops.load(path)
        self.assertEqual(caught.exception.kind, "format", str(caught.exception))
        self.assertIn(path, str(caught.exception))
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception).lower())

    def good_bytes(self):
        with open(write_qdq_program(self.path("good.etp")), "rb") as f:
            return f.read()

    def test_wrong_magic_is_a_format_error(self):
        self.assert_format_error(b"XXXX" + self.good_bytes()[4:], "magic")

    def test_unsupported_version_is_a_format_error(self):
        data = self.good_bytes()
        self.assert_format_error(data[:4] + (2).to_bytes(4, "little") + data[8:], "version")

    def test_truncated_header_is_a_format_error(self):
        self.assert_format_error(self.good_bytes()[:40])

    def test_header_that_is_not_json_is_a_format_error(self):
        data = bytearray(self.good_bytes())
        data[16] = ord("#")  # the header's opening brace
        self.assert_format_error(bytes(data))

    def test_operator_that_nobody_registered_is_missing(self):
        op = "et_ops_test::not_registered.out"
        path = write_program_with_unknown_operator(self.path("unknown.etp"), op)
        with self.assertRaises(et_ops.LoadError) as caught:
            et_ops.load(path)
        error = caught.exception
        self.assertEqual(error.kind, "missing_operators")
        self.assertEqual([m["op"] for m in error.missing], [op])
        self.assertIsNone(error.missing[0]["component"])
        self.assertIn(op, str(error))

    def test_missing_component_names_the_package_to_add(self):
        # In a child process: unregistering the quantized kernels must make the
        # load fail with the component named, and loading the library again
        # must make it succeed.
        path = write_qdq_program(self.path("qdq.etp"))
        code = f"""
import et_ops
library = [r["library"] for r in et_ops.registered_operators() if r["component"] == "kernels_quantized"][0]
assert et_ops.unregister_library(library) == {QUANTIZED_OPERATORS}
try:
    et_ops.load({path!r})
    raise SystemExit("loaded without its kernels")
except et_ops.LoadError as error:
    assert error.kind == "missing_operators", error.kind
    assert {{m["component"] for m in error.missing}} == {{"kernels_quantized"}}, error.missing
    print(error)
assert et_ops.load_library(library)["registered"] == {QUANTIZED_OPERATORS}
et_ops.load({path!r})
print("reloaded")
"""
        child = harness.run_python(code)
        self.assertEqual(child.returncode, 0, child.stderr)
        self.assertIn("et-kernels-quantized", child.stdout)
        self.assertIn("packaging problem", child.stdout)
        self.assertTrue(child.stdout.strip().endswith("reloaded"))


class RunTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.program = et_ops.load(write_qdq_program(self.path("qdq.etp")))

    def test_outputs_follow_the_reference_numerics(self):
        x = sample_input()
        quantized, dequantized = self.program.run([x])
        expected_q, expected_dq = expected_qdq(x)
        np.testing.assert_array_equal(quantized, expected_q)
        self.assertEqual(quantized.dtype, np.int8)
        np.testing.assert_array_equal(dequantized, expected_dq)

    def test_ties_round_to_even_and_values_saturate(self):
        x = np.array([[0.25, 0.75, 1.25], [-0.75, 1000.0, -1000.0]], dtype=np.float32)
        quantized, _ = self.program.run([x])
        # x / 0.5 = [0.5, 1.5, 2.5, -1.5, 2000, -2000] -> rne -> +1 -> clamp
        np.testing.assert_array_equal(quantized, [[1, 3, 3], [-1, 127, -128]])

    def assert_input_error(self, inputs, *fragments):
        with self.assertRaises(et_ops.InputError) as caught:
            self.program.run(inputs)
        self.assertIsInstance(caught.exception, ValueError)
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_wrong_dtype_is_an_input_error(self):
        self.assert_input_error([sample_input().astype(np.float64)], "input 0", "float32", "float64")

    def test_wrong_shape_is_an_input_error(self):
        self.assert_input_error([np.zeros((3, 2), np.float32)], "input 0", "(2, 3)", "(3, 2)")

    def test_wrong_input_count_is_an_input_error(self):
        self.assert_input_error([], "takes 1 input")
        self.assert_input_error([sample_input(), sample_input()], "got 2")

    def test_inputs_must_be_a_list_of_arrays(self):
        self.assert_input_error(sample_input(), "list of arrays")
        self.assert_input_error([[[0.0] * 3] * 2], "numpy array")

    def test_native_layer_rechecks_its_inputs(self):
        with self.assertRaises(ValueError):
            self.program._native.run([np.zeros((3, 2), np.float32)])

    def test_outputs_are_new_arrays_each_run(self):
        x = sample_input()
        first = self.program.run([x])
        first[1][...] = 42.0
        second = self.program.run([x])
        np.testing.assert_array_equal(second[1], expected_qdq(x)[1])
        for array in second:
            self.assertTrue(array.flags.owndata)
            self.assertTrue(array.flags.writeable)

    def test_any_memory_layout_and_byte_order_of_an_input_is_accepted(self):
        x = sample_input()
        expected = expected_qdq(x)[1]
        fortran = np.asfortranarray(x)
        big_endian = x.astype(">f4")
        strided = np.repeat(x, 2, axis=1)[:, ::2]
        for variant in (fortran, big_endian, strided):
            np.testing.assert_array_equal(self.program.run([variant])[1], expected)

    def test_runs_concurrently_from_threads(self):
        inputs = [sample_input(seed) for seed in range(8)]
        expected = [expected_qdq(x)[1] for x in inputs]
        failures = []

        def worker(index):
            for _ in range(50):
                result = self.program.run([inputs[index]])[1]
                if not np.array_equal(result, expected[index]):
                    failures.append(index)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_tensors_in_another_dim_order_are_exchanged_in_logical_order(self):
        program = et_ops.load(write_qdq_program(self.path("dim_order.etp"), dim_order=[1, 0]))
        self.assertEqual(program.input_specs[0].dim_order, (1, 0))
        x = sample_input(3)
        quantized, dequantized = program.run([x])
        expected_q, expected_dq = expected_qdq(x)
        np.testing.assert_array_equal(quantized, expected_q)
        np.testing.assert_array_equal(dequantized, expected_dq)

    def test_bfloat16_travels_as_uint16_raw_bits(self):
        program = et_ops.load(write_qdq_program(self.path("bf16.etp"), input_dtype="bfloat16",
                                                output_dtype="bfloat16"))
        self.assertEqual(program.input_specs[0].numpy_dtype, np.uint16)
        # Values that bfloat16 holds exactly: their bits are the float32 bits' upper half.
        x = np.array([[0.5, 1.25, -3.0], [100.0, -0.75, 2.0]], dtype=np.float32)
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        quantized, dequantized = program.run([bits])
        expected_q, expected_dq = expected_qdq(x)
        np.testing.assert_array_equal(quantized, expected_q)
        self.assertEqual(dequantized.dtype, np.uint16)
        np.testing.assert_array_equal(dequantized, (expected_dq.view(np.uint32) >> 16).astype(np.uint16))
        with self.assertRaises(et_ops.InputError) as caught:
            program.run([x])
        self.assertIn("raw bits of bfloat16", str(caught.exception))

    def test_kernel_error_is_a_run_error_and_the_program_stays_usable(self):
        bad = TensorQParams(scale=0.0, zero_point=0, quant_min=-128, quant_max=127, dtype="int8")
        program = et_ops.load(write_qdq_program(self.path("zero_scale.etp"), q=bad))
        with self.assertRaises(et_ops.RunError) as caught:
            program.run([sample_input()])
        self.assertIn("quantize_per_tensor", str(caught.exception))
        self.assertIn("scale", str(caught.exception))
        x = sample_input()
        np.testing.assert_array_equal(self.program.run([x])[1], expected_qdq(x)[1])


class RegistryTest(unittest.TestCase):
    def test_import_registered_each_component(self):
        registrations = et_ops._et_ops.import_registrations
        self.assertEqual([r["component"] for r in registrations], list(et_ops.components))
        for r in registrations:
            self.assertEqual(r["status"], "ok", r["message"])
        self.assertIn("kernels_quantized", et_ops.components)

    def test_registered_operators_list_every_kernel_with_its_origin(self):
        records = et_ops.registered_operators()
        for component in et_ops.components:
            mine = [r for r in records if r["component"] == component and r["active"]]
            expected = harness.operators_in_def(component.replace("kernels_", ""))
            self.assertEqual(sorted(r["op"] for r in mine), sorted(expected))
            libraries = {r["library"] for r in mine}
            self.assertEqual(len(libraries), 1)
            library = libraries.pop()
            self.assertTrue(os.path.isabs(library) and os.path.exists(library), library)
            self.assertTrue(os.path.basename(library).startswith("libet_" + component + ".so"), library)
            for r in mine:
                self.assertEqual(r["key"], "")
                self.assertTrue(r["schema"].startswith(r["op"] + "("), r["schema"])
                self.assertRegex(r["fingerprint"], r"^[0-9a-f]{16,}$")

    def test_set_duplicate_policy_accepts_the_two_policies(self):
        self.addCleanup(et_ops.clear_duplicate_policy)
        for name in ("first-wins", "fatal"):
            et_ops.set_duplicate_policy(name)
            self.assertEqual(et_ops.duplicate_policy()["policy"], name)
            self.assertEqual(et_ops.duplicate_policy()["source"], "set_duplicate_policy()")
        et_ops.clear_duplicate_policy()
        self.assertNotEqual(et_ops.duplicate_policy()["source"], "set_duplicate_policy()")

    def test_set_duplicate_policy_rejects_anything_else(self):
        before = et_ops.duplicate_policy()
        for value in ("first_wins", "FATAL", "", "ignore", None, 1):
            with self.assertRaises(ValueError) as caught:
                et_ops.set_duplicate_policy(value)
            self.assertIn("'fatal'", str(caught.exception))
            self.assertIn("'first-wins'", str(caught.exception))
        self.assertEqual(et_ops.duplicate_policy(), before)

    def test_set_duplicate_policy_raises_a_usage_error(self):
        with self.assertRaises(et_ops.UsageError):
            et_ops.set_duplicate_policy("ignore")

    def test_invalid_policy_variable_makes_the_import_fail(self):
        child = harness.run_python("import et_ops", {"ET_OPS_DUPLICATE_POLICY": "first_wins"})
        self.assertNotEqual(child.returncode, 0)
        self.assertIn("ImportError", child.stderr)
        self.assertIn("ET_OPS_DUPLICATE_POLICY", child.stderr)
        self.assertIn("first-wins", child.stderr)

    def test_counters_count_the_registrations(self):
        counters = et_ops.counters()
        self.assertEqual(set(counters), {"registered", "deduplicated", "conflicts", "unregistered"})
        self.assertGreaterEqual(counters["registered"], QUANTIZED_OPERATORS)


class LoadLibraryTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.addCleanup(et_ops.clear_duplicate_policy)
        self.library = quantized_library_path()

    def copy_of_library(self):
        copy = self.path("libet_kernels_quantized_copy.so")
        shutil.copyfile(self.library, copy)
        return copy

    def test_shipped_library_again_is_a_no_op(self):
        before = et_ops.counters()
        result = et_ops.load_library(self.library)
        self.assertEqual(result["registered"], 0)
        self.assertEqual(result["deduplicated"], 0)
        self.assertEqual(result["unchanged"], QUANTIZED_OPERATORS)
        self.assertEqual(result["component"], "kernels_quantized")
        self.assertEqual(et_ops.counters(), before)

    def test_copy_is_deduplicated_under_first_wins(self):
        copy = self.copy_of_library()
        et_ops.set_duplicate_policy("first-wins")
        before = et_ops.counters()
        result = et_ops.load_library(copy)
        self.assertEqual((result["registered"], result["deduplicated"]), (0, QUANTIZED_OPERATORS))
        self.assertEqual(result["library"], os.path.realpath(copy))
        self.assertEqual(et_ops.counters()["deduplicated"], before["deduplicated"] + QUANTIZED_OPERATORS)
        records = et_ops.registered_operators()
        shadows = {r["op"]: r for r in records if r["library"] == os.path.realpath(copy)}
        active = {r["op"]: r for r in records if r["library"] == self.library}
        self.assertEqual(len(shadows), QUANTIZED_OPERATORS)
        for op, shadow in shadows.items():
            self.assertFalse(shadow["active"])
            self.assertTrue(active[op]["active"])
            self.assertEqual(shadow["fingerprint"], active[op]["fingerprint"])
        self.assertEqual(et_ops.unregister_library(copy), QUANTIZED_OPERATORS)
        self.assertFalse(any(r["library"] == os.path.realpath(copy) for r in et_ops.registered_operators()))

    def test_copy_aborts_the_process_under_fatal(self):
        copy = self.copy_of_library()
        code = f"import et_ops\net_ops.set_duplicate_policy('fatal')\net_ops.load_library({copy!r})\n"
        child = harness.run_python(code)
        self.assertEqual(child.returncode, -signal.SIGABRT, child.stderr)
        self.assertIn("Re-registering quantized_decomposed::", child.stderr)
        self.assertIn(copy, child.stderr)

    def test_different_copy_is_a_conflict_under_first_wins(self):
        original = os.environ["ET_OPS_TEST_COPY_A"]
        modified = os.environ["ET_OPS_TEST_COPY_MODIFIED"]
        et_ops.set_duplicate_policy("first-wins")
        first = et_ops.load_library(original)
        self.addCleanup(et_ops.unregister_library, original)
        self.assertGreater(first["registered"], 0)
        before = et_ops.counters()
        with self.assertRaises(et_ops.LibraryError) as caught:
            et_ops.load_library(modified)
        self.assertEqual(caught.exception.reason, "conflict")
        self.assertIn(os.path.realpath(modified), str(caught.exception))
        self.assertIn(os.path.realpath(original), str(caught.exception))
        self.assertGreater(et_ops.counters()["conflicts"], before["conflicts"])
        self.assertEqual(et_ops.counters()["registered"], before["registered"])

    def test_missing_file_is_an_open_error(self):
        path = self.path("libnothing.so")
        with self.assertRaises(et_ops.LibraryError) as caught:
            et_ops.load_library(path)
        self.assertEqual(caught.exception.reason, "open")
        self.assertIn(path, str(caught.exception))

    def test_shared_object_without_the_entry_point_is_rejected(self):
        not_a_kernel_library = et_ops._et_ops.__file__
        with self.assertRaises(et_ops.LibraryError) as caught:
            et_ops.load_library(not_a_kernel_library)
        self.assertEqual(caught.exception.reason, "entry_point")
        self.assertIn("et_ops_kernel_library_manifest", str(caught.exception))


class ErrorsTest(unittest.TestCase):
    """Every exception the package defines derives from et_ops.Error."""

    def test_every_exception_class_derives_from_error(self):
        import et_ops.cpu_independence
        import et_ops.errors
        import et_ops.sdk
        modules = (et_ops, et_ops.errors, et_ops.etp, et_ops.sdk, et_ops.cpu_independence)
        classes = {value for module in modules for value in vars(module).values()
                   if isinstance(value, type) and issubclass(value, BaseException)
                   and value.__module__.startswith("et_ops")}
        self.assertIn(et_ops.PinningError, classes)
        for cls in classes:
            with self.subTest(cls.__name__):
                self.assertTrue(issubclass(cls, et_ops.Error))

    def test_a_program_that_does_not_parse_is_a_format_error(self):
        with self.assertRaises(et_ops.FormatError) as caught:
            et_ops.etp.parse_program(b"ETP")
        self.assertIsInstance(caught.exception, ValueError)


if __name__ == "__main__":
    harness.main("python_module")
