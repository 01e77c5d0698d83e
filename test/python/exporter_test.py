"""The exporter: PyTorch's quantization flow, the generic lowering, the command line.

In-process (et_ops.export.quantize / export) on small modules built from
the supported operations (export_models.py): every program keeps its
weights as integers and lowers every call form alike (the numeric contract
is numerics_test.py's). Through
the command line (python3 -m et_ops.export): the four files, byte-identical
reruns, usage errors, the unsupported-node report, calibration from a file,
and byte-identical outputs from Python and from the C++ et-ops tool.
"""

import json
import operator
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import harness
import et_ops
import et_ops.export as ex
from et_ops import etp
from et_ops.lowering import supported_operations

import export_contract
import export_models

TEST_DIR = os.path.dirname(os.path.abspath(__file__))


def run_exporter(*args, env=None):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ["PYTHONPATH"], TEST_DIR]))
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "et_ops.export", *args], capture_output=True, text=True,
                          timeout=600, env=environment)


def read_all(directory):
    """{file name: bytes} of every file in `directory`."""
    contents = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            contents[name] = f.read()
    return contents


def example_input(shape, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def quantized(model_class, seed=0):
    """(reference quantized model, example input) of an export_models class."""
    torch.manual_seed(seed)
    model = export_contract.condition(model_class(), model_class.input_shape, seed)
    x = example_input(model_class.input_shape, seed)
    calibration = [(example_input(model_class.input_shape, seed + 1 + i),) for i in range(4)]
    return ex.quantize(model, (x,), calibration), x


def run_program(program, x, directory):
    path = os.path.join(directory, program.name + ".etp")
    program.save(path)
    (output,) = et_ops.load(path).run([x.numpy()])
    return output


class ApiTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_exporter_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def test_weights_are_integer_constants_never_float_copies(self):
        reference, x = quantized(export_models.Residual)
        program = etp.parse_program(ex.export(reference, (x,)).to_bytes())
        weight_shapes = {tuple(m.weight.shape) for m in reference.modules() if isinstance(m, (nn.Conv2d, nn.Linear))}
        integer_shapes = {tuple(c.shape) for c in program.constants.values() if c.dtype in (np.int8, np.uint8)}
        self.assertTrue(weight_shapes <= integer_shapes, (weight_shapes, integer_shapes))
        for index, constant in program.constants.items():
            if constant.dtype.kind == "f":
                self.assertLessEqual(constant.ndim, 1, f"float constant {index} of shape {constant.shape}")

    def test_operators_bytes_and_save_agree(self):
        reference, x = quantized(export_models.Branches)
        program = ex.export(reference, (x,), name="branches")
        path = os.path.join(self.dir, "branches.etp")
        program.save(path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), program.to_bytes())
        parsed = etp.parse_program(program.to_bytes())
        self.assertEqual(program.operators, sorted(set(parsed.operators)))
        self.assertEqual(parsed.name, "branches")
        self.assertEqual(program.to_bytes(), ex.export(reference, (x,), name="branches").to_bytes())

    def test_quantize_returns_the_reference_model_and_leaves_the_model_alone(self):
        model = export_models.Residual().eval()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        x = example_input(export_models.Residual.input_shape)
        reference = ex.quantize(model, (x,), [x, x])
        self.assertIsInstance(reference, torch.fx.GraphModule)
        targets = {n.target for n in reference.graph.nodes}
        self.assertIn(torch.quantize_per_tensor, targets)
        self.assertIn("dequantize", targets)
        for key, value in model.state_dict().items():
            self.assertTrue(torch.equal(value, before[key]), key)
        with self.assertRaises(ValueError):
            ex.quantize(model, (x,), [])

    def test_float_module_exports_without_quantization(self):
        torch.manual_seed(4)
        model = export_contract.condition(export_models.Branches(), export_models.Branches.input_shape)
        x = example_input(export_models.Branches.input_shape)
        program = ex.export(model, (x,))
        self.assertFalse([op for op in program.operators if op.startswith("quantized_decomposed::")])
        output = run_program(program, x, self.dir)
        with torch.no_grad():
            expected = model(x).numpy()
        np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-5)

    def test_every_call_form_lowers_alike(self):
        class Forms(nn.Module):
            def __init__(self, form):
                super().__init__()
                self.form = form

            def forward(self, x):
                return self.form(x, x * 2.0)

        forms = {"torch.add": torch.add, "operator.add": operator.add, "Tensor.add": lambda a, b: a.add(b)}
        x = example_input((2, 3))
        programs = {name: ex.export(Forms(form), (x,), name="forms") for name, form in forms.items()}
        for name, program in programs.items():
            self.assertEqual(program.to_bytes(), programs["torch.add"].to_bytes(), name)

    def test_eval_mode_no_ops_disappear(self):
        class WithNoOps(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.dropout = nn.Dropout(0.5)
                self.identity = nn.Identity()

            def forward(self, x):
                return F.dropout(self.identity(self.dropout(self.fc(x))), 0.2, training=False).contiguous()

        class Without(nn.Module):
            def __init__(self, fc):
                super().__init__()
                self.fc = fc

            def forward(self, x):
                return self.fc(x)

        model = WithNoOps().eval()
        x = example_input((2, 3))
        self.assertEqual(ex.export(model, (x,), name="m").to_bytes(),
                         ex.export(Without(model.fc), (x,), name="m").to_bytes())

    def test_unsupported_nodes_are_reported_all_at_once(self):
        torch.manual_seed(0)
        x = example_input(export_models.Unsupported.input_shape)
        for what, module in (("float", export_models.Unsupported().eval()),
                             ("quantized", ex.quantize(export_models.Unsupported(), (x,), [x]))):
            with self.subTest(what), self.assertRaises(ex.UnsupportedError) as caught:
                ex.export(module, (x,), name="unsupported")
            nodes = {(n.op, n.target, n.module_path) for n in caught.exception.nodes}
            self.assertIn(("call_function", "aten::erfinv", "inner"), nodes)
            self.assertIsInstance(caught.exception, et_ops.Error)
            self.assertIn(("call_function", "aten::cumsum", ""), nodes)
            message = str(caught.exception)
            self.assertIn("aten::erfinv", message)
            self.assertIn("module 'inner'", message)
            self.assertIn("aten::cumsum", message)
            self.assertIn("export_models.py:", message)  # the user's source line
            self.assertIn("(in forward)", message)

    def test_in_place_operations_compute_what_pytorch_does(self):
        class InPlace(nn.Module):
            def forward(self, x):
                y = x * 1.0
                z = y.relu_()
                return y + z

        x = example_input((2, 3))
        output = run_program(ex.export(InPlace(), (x,), name="in_place"), x, self.dir)
        np.testing.assert_array_equal(output, InPlace()(x).numpy())

    def test_in_place_update_of_a_buffer_is_reported(self):
        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", torch.zeros(3))

            def forward(self, x):
                self.total.add_(x.sum(0))
                return x * 2.0

        x = example_input((2, 3))
        model = Counter()
        with self.assertRaises(ex.UnsupportedError) as caught:
            ex.export(model, (x,))
        self.assertIn("writes the module's buffer 'total' in place", str(caught.exception))
        self.assertTrue(torch.equal(model.total, torch.zeros(3)), "exporting ran the user's module itself")

    def test_a_buffer_written_whole_with_copy_is_state_kept_between_runs(self):
        class Accumulator(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", torch.full((3,), 0.5))

            def forward(self, x):
                self.total.copy_(self.total + x.sum(0))
                return x * self.total

        x = example_input((2, 3))
        model = Accumulator()
        program = ex.export(model, (x,), name="accumulator")
        self.assertTrue(torch.equal(model.total, torch.full((3,), 0.5)), "exporting ran the user's module itself")
        path = os.path.join(self.dir, "accumulator.etp")
        program.save(path)
        session = et_ops.load(path).session()
        reference = Accumulator()
        for _ in range(3):  # each run adds to the state, as each call adds to the buffer
            (output,) = session.run([x.numpy()])
            np.testing.assert_array_equal(output, reference(x).numpy())
        session.reset()
        np.testing.assert_array_equal(session.run([x.numpy()])[0], Accumulator()(x).numpy())

    def test_views_and_clones_of_a_buffer_hold_its_values_where_forward_took_them(self):
        # Views are emitted where they are read, as one copy per chain of views, and a chain back to its
        # start's shape is no copy: a view of the buffer shows its values where it is read, as in PyTorch,
        # while a clone taken before a write keeps the old values.
        class Shift(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("history", torch.arange(6.0).reshape(2, 3))

            def forward(self, x):
                before = self.history.view(3, 2).view(2, 3)
                kept = self.history.clone()
                flat = self.history.view(6)
                early = flat.sum()
                self.history.copy_(self.history * 0.5 + x.sum(0))
                now = self.history.view(3, 2).view(2, 3)
                late = flat.sum()
                return before * 2.0 + kept + flat.view(2, 3) * 0.25 + now + x + early - late * 0.125

        x = example_input((2, 2, 3))
        program = ex.export(Shift(), (x,), name="shift")
        path = os.path.join(self.dir, "shift.etp")
        program.save(path)
        operators = [i["op"] for i in etp.read_program(path).instructions]
        # `kept` is copied, and `flat` where each sum reads it (before and after the write); the other views
        # come back to the buffer's shape
        self.assertEqual(operators.count("aten::view_copy.out"), 3, operators)
        session = et_ops.load(path).session()
        reference = Shift()
        for _ in range(3):
            (output,) = session.run([x.numpy()])
            np.testing.assert_array_equal(output, reference(x).numpy())

    def test_every_operator_of_the_table_is_provided_by_a_kernel_set(self):
        registered = {r["op"] for r in et_ops.registered_operators()}
        for name, operators in supported_operations():
            for op in operators:
                self.assertIn(op, registered, f"{name} lowers to {op}, which no kernel set provides")


class CommandLineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="et_ops_exporter_cli_")
        cls.module_args = ["--module", "export_models:Residual", "--input-shape", "2,4,12,12",
                           "--calibration-batches", "3", "--name", "residual"]
        cls.results = {}
        for name, args in (("qcnn", ["--model", "cnn"]), ("residual", cls.module_args)):
            cls.results[name] = run_exporter(*args, "--output-dir", os.path.join(cls.dir, "first"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_writes_and_prints_the_four_files(self):
        for name, result in self.results.items():
            self.assertEqual(result.returncode, 0, result.stderr)
            paths = ex.output_paths(name, os.path.join(self.dir, "first"))
            self.assertEqual(result.stdout.split(), list(paths.values()))
            for path in paths.values():
                self.assertTrue(os.path.isfile(path), path)

    def test_same_command_writes_byte_identical_files(self):
        again = os.path.join(self.dir, "again")
        result = run_exporter(*self.module_args, "--output-dir", again)
        self.assertEqual(result.returncode, 0, result.stderr)
        first = read_all(os.path.join(self.dir, "first"))
        for name, data in read_all(again).items():
            self.assertEqual(data, first[name], name)

    def test_report_describes_the_program(self):
        directory = os.path.join(self.dir, "first")
        with open(os.path.join(directory, "residual_quantization.json"), encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(report["source"], {"module": "export_models:Residual"})
        self.assertEqual(report["input_shape"], [2, 4, 12, 12])
        self.assertEqual(report["tolerance"]["output_step"], report["output"]["scale"])
        self.assertEqual(report["pytorch_numerics"]["environment"]["ATEN_CPU_CAPABILITY"], "default")
        header = etp.read_program(os.path.join(directory, "residual.etp")).header
        scales = {v["value"] for v in header["values"] if v["type"] == "double"}
        for name, q in report["activations"].items():
            self.assertIn(q["scale"], scales, name)

    def test_program_runs_close_to_the_reference_and_python_equals_cpp(self):
        directory = os.path.join(self.dir, "first")
        for name in self.results:
            paths = ex.output_paths(name, directory)
            x = np.load(paths["input"])
            (output,) = et_ops.load(paths["program"]).run([x])
            reference = np.load(paths["reference"])
            with open(paths["quantization"], encoding="utf-8") as f:
                step = json.load(f)["tolerance"]["output_step"]
            measured = export_contract.distance(output, reference, step)
            print(f"{name}: {measured} from the reference written by the exporter")
            self.assertLessEqual(measured.max_steps, export_contract.MAX_STEPS_FLOOR)
            cpp_dir = os.path.join(self.dir, "cpp_" + name)
            subprocess.run([os.environ["ET_OPS_TOOL"], "run", paths["program"], "--input", paths["input"],
                            "--output-dir", cpp_dir], check=True, capture_output=True, timeout=300)
            cpp = np.load(os.path.join(cpp_dir, "output_0.npy"))
            self.assertEqual(cpp.tobytes(), output.tobytes(), name)

    def test_calibration_from_a_file(self):
        samples = np.random.default_rng(5).standard_normal((6, 4, 12, 12), dtype=np.float32)
        path = os.path.join(self.dir, "samples.npy")
        np.save(path, samples)
        out = os.path.join(self.dir, "from_file")
        args = ["--module", "export_models:Residual", "--input-shape", "2,4,12,12", "--name", "r"]
        result = run_exporter(*args, "--calibration", path, "--output-dir", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "r_quantization.json"), encoding="utf-8") as f:
            calibration = json.load(f)["calibration"]
        self.assertEqual(calibration["samples"], 6)
        self.assertEqual(len(calibration["sha256"]), 64)
        np.save(path, samples.astype(np.float64))
        result = run_exporter(*args, "--calibration", path, "--output-dir", out)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("expected float32 samples", result.stderr)

    def test_usage_errors(self):
        out = os.path.join(self.dir, "usage")
        cases = [
            (["--model", "nosuchmodel"], "invalid choice"),
            (["--module", "export_models:Residual"], "--module needs --input-shape"),
            (["--module", "export_models", "--input-shape", "1,4"], "PKG.MOD:FACTORY"),
            (["--module", "no_such_module:F", "--input-shape", "1,4"], "no_such_module"),
            (["--module", "export_models:Residual", "--input-shape", "2,x"], "comma-separated"),
            (["--model", "mlp", "--calibration-batches", "0"], "must be positive"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                result = run_exporter(*args, "--output-dir", out)
                self.assertNotEqual(result.returncode, 0)
                self.assertIn(fragment, result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_unsupported_module_writes_nothing_and_lists_every_node(self):
        out = os.path.join(self.dir, "unsupported")
        result = run_exporter("--module", "export_models:Unsupported", "--input-shape", "1,4", "--output-dir", out)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("aten::erfinv", result.stderr)
        self.assertIn("aten::cumsum", result.stderr)
        self.assertIn("export_models.py:", result.stderr)
        self.assertIn("2 node(s)", result.stderr)
        self.assertFalse(os.path.exists(out) and os.listdir(out))


if __name__ == "__main__":
    harness.main("python_exporter")
