"""The xnnpack backend end to end: export(..., backend="xnnpack") and
--backend, the int8 operators in the program, numbers held to PyTorch's own
quantized engine, the same bytes on any thread count, profiles from Python
and from et-ops, and the missing-component diagnostic when the program runs
without the xnnpack kernel set.
"""

import copy
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import torch
import torchvision
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

import harness
import et_ops
import et_ops.export as ex

import export_contract

TOOL = os.environ["ET_OPS_TOOL"]
QUANTIZABLE = torchvision.models.quantization
# program name -> (float model, input shape, PyTorch qconfig mapping): the
# exporter's default (qnnpack: 8-bit activations, per-tensor weights) and
# PyTorch's x86 defaults (x86, fbgemm: 7-bit activations, reduce_range,
# per-channel weights), each on one architecture of each kind.
ARCHITECTURES = {
    "resnet18": (lambda: QUANTIZABLE.resnet18(weights=None, quantize=False), (1, 3, 64, 64), "qnnpack"),
    "mobilenet_v2": (lambda: QUANTIZABLE.mobilenet_v2(weights=None, quantize=False), (1, 3, 64, 64), "qnnpack"),
    "mobilenet_v2_x86": (lambda: QUANTIZABLE.mobilenet_v2(weights=None, quantize=False), (1, 3, 64, 64), "x86"),
    "resnet18_fbgemm": (lambda: QUANTIZABLE.resnet18(weights=None, quantize=False), (1, 3, 64, 64), "fbgemm"),
    # hardswish, squeeze-excitation (hardsigmoid, a broadcasting mul): one layout throughout
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), (1, 3, 64, 64), "qnnpack"),
}
# An int8 backend is held to PyTorch's own quantized engine computing as it
# does (int32 bias, float32 requantization: qnnpack) on the same quantized
# model, with a margin of 1.5x and at least 3 steps / 0.5 step.
MARGIN, MAX_FLOOR, MEAN_FLOOR = 1.5, 3.0, 0.5


def normal(shape, seed):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def pytorch_output(model, x, calibration, mapping, engine):
    """PyTorch's quantized model (convert_fx) of `mapping` on its `engine`."""
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        prepared = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping(mapping), (x,))
        with torch.no_grad():
            for batch in calibration:
                prepared(batch)
            return convert_fx(prepared)(x).numpy()
    finally:
        torch.backends.quantized.engine = previous


class XnnpackBackendTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="et_ops_xnnpack_backend_test_")
        cls.programs = {}
        for name, (build, shape, mapping) in ARCHITECTURES.items():
            torch.manual_seed(0)
            model = export_contract.condition(build(), shape)
            x = normal(shape, 0)
            calibration = [normal(shape, 1 + i) for i in range(3)]
            reference = ex.quantize(model, (x,), calibration, get_default_qconfig_mapping(mapping))
            program = ex.export(reference, (x,), name=name, backend="xnnpack")
            path = os.path.join(cls.dir, name + ".etp")
            program.save(path)
            with torch.no_grad():
                reference_output = reference(x).numpy()
            cls.programs[name] = (model, x, calibration, reference, program, path, reference_output)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_backends_are_listed(self):
        self.assertEqual(ex.BACKENDS, ("reference", "xnnpack"))
        _, x, _, reference, _, _, _ = self.programs["resnet18"]
        with self.assertRaises(ValueError) as raised:
            ex.export(reference, (x,), backend="fastest")
        self.assertIn("reference, xnnpack", str(raised.exception))
        plain = ex.export(reference, (x,))
        self.assertFalse([op for op in plain.operators if op.startswith("et_xnnpack::")])

    def test_int8_operators_replace_the_float_layers(self):
        for name, (_, _, _, reference, program, _, _) in self.programs.items():
            with self.subTest(name):
                ops = program.operators
                for op in ("et_xnnpack::conv2d.out", "et_xnnpack::add.out", "et_xnnpack::linear.out",
                           "et_xnnpack::adaptive_avg_pool2d.out"):
                    self.assertIn(op, ops)
                for op in ("aten::convolution.out", "aten::linear.out", "aten::hardtanh.out", "aten::relu.out"):
                    self.assertNotIn(op, ops)
                weights = sum(m.weight.numel() for m in reference.modules()
                              if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)))
                self.assertLess(len(program.to_bytes()), 2 * weights, "weights must stay one byte each")
        self.assertIn("et_xnnpack::max_pool2d.out", self.programs["resnet18"][4].operators)

    def instructions(self, path):
        inspect = subprocess.run([TOOL, "inspect", path, "--json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        return [i["op"] for i in json.loads(inspect.stdout)["instructions"]]

    def test_mobilenet_v3_runs_in_one_layout(self):
        # Without int8 hardswish, hardsigmoid and mul, each falls back to the
        # reference path and its tensor crosses layouts (47 convert_layout
        # among 52 convolutions): now only the input's conversion is left.
        ops = self.instructions(self.programs["mobilenet_v3_small"][5])
        self.assertEqual(ops.count("et_xnnpack::conv2d.out"), 52)
        self.assertEqual(ops.count("et_xnnpack::convert_layout.out"), 1)
        for op in ("et_xnnpack::hardswish.out", "et_xnnpack::hardsigmoid.out", "et_xnnpack::mul.out"):
            self.assertIn(op, ops)
        for op in ("aten::hardswish.out", "aten::hardsigmoid.out", "aten::mul.out"):
            self.assertNotIn(op, ops)

    def test_an_inception_block_runs_in_one_layout(self):
        # GoogLeNet's pattern: max pooling with ceil_mode, branches joined by
        # cat (their outputs share the cat's quantization), then a
        # broadcasting addition: int8 throughout, converted only at the input
        # and the float output.
        def conv(c_in, c_out, k, **kw):
            return torch.nn.Sequential(torch.nn.Conv2d(c_in, c_out, k, **kw), torch.nn.ReLU())

        class Inception(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = torch.nn.Sequential(conv(3, 16, 3, stride=2), torch.nn.MaxPool2d(3, 2, ceil_mode=True))
                self.branches = torch.nn.ModuleList([
                    conv(16, 8, 1), torch.nn.Sequential(conv(16, 8, 1), conv(8, 8, 3, padding=1)),
                    torch.nn.Sequential(torch.nn.MaxPool2d(3, 1, 1, ceil_mode=True), conv(16, 4, 1))])
                self.head = torch.nn.Conv2d(20, 8, 1)

            def forward(self, x):
                x = self.stem(x)
                y = self.head(torch.cat([branch(x) for branch in self.branches], 1))
                return y + torch.nn.functional.adaptive_avg_pool2d(y, 1)  # an addition, broadcast

        torch.manual_seed(0)
        model, shape = Inception().eval(), (1, 3, 29, 31)
        x, calibration = normal(shape, 0), [normal(shape, 1 + i) for i in range(3)]
        reference = ex.quantize(model, (x,), calibration)
        program = ex.export(reference, (x,), backend="xnnpack")
        path = os.path.join(self.dir, "inception.etp")
        program.save(path)
        ops = self.instructions(path)
        self.assertEqual(ops.count("et_xnnpack::cat.out"), 1)
        self.assertEqual(ops.count("et_xnnpack::max_pool2d.out"), 2)
        self.assertEqual(ops.count("et_xnnpack::convert_layout.out"), 2)
        self.assertEqual(ops.count("et_xnnpack::add.out"), 1)
        for op in ("aten::cat.out", "aten::add.out"):
            self.assertNotIn(op, ops)
        loaded = et_ops.load(path)
        (output,) = loaded.run([x.numpy()])
        self.assertEqual(output.tobytes(), loaded.run([x.numpy()], threads=2)[0].tobytes())
        with torch.no_grad():
            reference_output = reference(x).numpy()
        step = program.quantization["outputs"][0]["scale"]
        measured = export_contract.distance(output, reference_output, step)
        engine = export_contract.distance(pytorch_output(model, x, calibration, "qnnpack", "qnnpack"),
                                          reference_output, step)
        self.assertLessEqual(measured.max_steps, max(MARGIN * engine.max_steps, MAX_FLOOR), f"{measured}; {engine}")
        self.assertLessEqual(measured.mean_steps, max(MARGIN * engine.mean_steps, MEAN_FLOOR), f"{measured}; {engine}")

    def test_activations_and_broadcasting_mul_give_the_reference_paths_bytes(self):
        # No convolution: every int8 operator here computes as the reference
        # path does, so both backends' programs give the same bytes, on
        # channels-last and contiguous tensors and with either operand broadcast.
        class Activations(torch.nn.Module):
            def forward(self, x, s):
                scale = torch.nn.functional.hardsigmoid(s)
                return (torch.nn.functional.hardswish(x) * scale, scale * torch.sigmoid(x),
                        torch.sigmoid(s) * torch.nn.functional.hardswish(s))

        shapes = ((1, 24, 9, 11), (1, 24, 1, 1))
        inputs = tuple(3 * normal(shape, 10 + i) for i, shape in enumerate(shapes))
        calibration = [tuple(3 * normal(shape, 20 + 2 * b + i) for i, shape in enumerate(shapes)) for b in range(2)]
        reference = ex.quantize(Activations().eval(), inputs, calibration)
        beyond_calibration = [4 * normal(shape, 30 + i).numpy() for i, shape in enumerate(shapes)]
        outputs = {}
        for backend in ("reference", "xnnpack"):
            program = ex.export(reference, inputs, backend=backend)
            path = os.path.join(self.dir, f"activations_{backend}.etp")
            program.save(path)
            outputs[backend] = et_ops.load(path).run(beyond_calibration)
            if backend == "xnnpack":
                ops = self.instructions(path)
                for op in ("et_xnnpack::hardswish.out", "et_xnnpack::hardsigmoid.out", "et_xnnpack::sigmoid.out"):
                    self.assertIn(op, ops)
                self.assertEqual(ops.count("et_xnnpack::mul.out"), 3)
                self.assertNotIn("aten::mul.out", ops)
        for reference_output, output in zip(outputs["reference"], outputs["xnnpack"]):
            self.assertEqual(reference_output.tobytes(), output.tobytes())

    def test_numbers_are_held_to_pytorchs_quantized_engine(self):
        for name, (model, x, calibration, _, program, path, reference_output) in self.programs.items():
            with self.subTest(name):
                mapping = ARCHITECTURES[name][2]
                (output,) = et_ops.load(path).run([x.numpy()])
                step = program.quantization["outputs"][0]["scale"]
                measured = export_contract.distance(output, reference_output, step)
                engine = export_contract.distance(pytorch_output(model, x, calibration, mapping, "qnnpack"),
                                                  reference_output, step)
                allowed_max = max(MARGIN * engine.max_steps, MAX_FLOOR)
                allowed_mean = max(MARGIN * engine.mean_steps, MEAN_FLOOR)
                print(f"{name} ({mapping} mapping): {measured}; PyTorch qnnpack: {engine}")
                self.assertLessEqual(measured.max_steps, allowed_max)
                self.assertLessEqual(measured.mean_steps, allowed_mean)

    def test_a_reduced_range_mapping_keeps_full_range_values_beyond_its_calibration(self):
        # x86 mapping: activations are calibrated to [0, 127] (reduce_range),
        # but the reference model's quantize clamps to quint8's [0, 255]: an
        # input beyond the calibrated range gives activations above 127, and
        # the program must follow the reference there too.
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.ao.quantization.QuantStub(), torch.nn.Conv2d(8, 8, 3), torch.nn.ReLU(),
                                    torch.ao.quantization.DeQuantStub()).eval()
        shape = (1, 8, 12, 12)
        reference = ex.quantize(model, (normal(shape, 0),), [normal(shape, 1)], get_default_qconfig_mapping("x86"))
        program = ex.export(reference, (normal(shape, 0),), backend="xnnpack")
        self.assertIn("et_xnnpack::conv2d.out", program.operators)
        path = os.path.join(self.dir, "reduced_range.etp")
        program.save(path)
        x = 10 * normal(shape, 2)
        (output,) = et_ops.load(path).run([x.numpy()])
        with torch.no_grad():
            expected = reference(x).numpy()
        measured = export_contract.distance(output, expected, program.quantization["outputs"][0]["scale"])
        self.assertLessEqual(measured.max_steps, 1.0 + 1e-4, str(measured))

    def test_any_thread_count_gives_the_same_bytes(self):
        for name, (_, x, _, _, _, path, _) in self.programs.items():
            with self.subTest(name):
                program = et_ops.load(path)
                (one,) = program.run([x.numpy()])
                for threads in (2, 3, 1):
                    (other,) = program.run([x.numpy()], threads=threads)
                    self.assertEqual(one.tobytes(), other.tobytes(), f"{threads} threads")
                for bad in (0, -1, 1.5, True):
                    with self.assertRaises(ValueError):
                        program.run([x.numpy()], threads=bad)

    def test_profile_returns_one_record_per_instruction(self):
        _, x, _, _, _, path, _ = self.programs["mobilenet_v2"]
        program = et_ops.load(path)
        outputs, records = program.run([x.numpy()], profile=True)
        (plain,) = program.run([x.numpy()])
        self.assertEqual(outputs[0].tobytes(), plain.tobytes())
        self.assertEqual(len(records), program.instruction_count)
        self.assertEqual([r["instruction"] for r in records], list(range(program.instruction_count)))
        for record in records:
            expected_set = "kernels_xnnpack" if record["op"].startswith("et_xnnpack::") else None
            if expected_set:
                self.assertEqual(record["kernel_set"], expected_set)
            self.assertGreaterEqual(record["duration_us"], 0.0)
            self.assertEqual(len(record["shapes"]), len(record["dtypes"]))
        conv = next(r for r in records if r["op"] == "et_xnnpack::conv2d.out")
        self.assertEqual(conv["shapes"][0], (1, 3, 64, 64))
        self.assertEqual(conv["dtypes"][0], "int8")
        starts = [r["start_us"] for r in records]
        self.assertEqual(starts, sorted(starts))

    def test_et_ops_runs_with_threads_and_writes_a_profile(self):
        _, x, _, _, _, path, _ = self.programs["resnet18"]
        input_path = os.path.join(self.dir, "input.npy")
        np.save(input_path, x.numpy())
        outputs = {}
        for threads in ("1", "2"):
            out_dir = os.path.join(self.dir, "out" + threads)
            trace = os.path.join(self.dir, f"trace{threads}.json")
            run = subprocess.run([TOOL, "run", path, "--input", input_path, "--output-dir", out_dir, "--threads",
                                  threads, "--profile", trace], capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            for column in ("operator", "kernel set", "calls", "total (ms)", "share"):
                self.assertIn(column, run.stdout)
            self.assertIn("et_xnnpack::conv2d.out", run.stdout)
            with open(trace, encoding="utf-8") as f:
                events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
            self.assertEqual(len(events), et_ops.load(path).instruction_count)
            self.assertTrue(all("shapes" in e["args"] and "kernel_set" in e["args"] and e["dur"] >= 0 for e in events))
            with open(os.path.join(out_dir, "output_0.npy"), "rb") as f:
                outputs[threads] = f.read()
        self.assertEqual(outputs["1"], outputs["2"])
        bad = subprocess.run([TOOL, "run", path, "--threads", "0"], capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--threads", bad.stderr)

    def test_every_engine_and_microkernel_path_gives_the_same_bytes(self):
        # XNNPACK's AVX2 microkernels alone (ET_OPS_XNNPACK_ONEDNN=0) beside
        # every other path: oneDNN's AVX2 and AVX-512 kernels on convolutions
        # whose input lies within 128 values (the x86-mapped programs' 7-bit
        # activations), its VNNI kernels on any where the CPU has them.
        paths = {"xnnpack": ("avx2", "0"), "avx2": ("avx2", "1"), "avx2vnni": ("avx2vnni", "1"),
                 "avx512": ("avx512", "1"), "native": ("native", "1")}
        for name, (_, x, _, _, _, path, _) in self.programs.items():
            with self.subTest(name):
                input_path = os.path.join(self.dir, name + "_input.npy")
                np.save(input_path, x.numpy())
                outputs = {}
                for label, (isa, onednn) in paths.items():
                    out_dir = os.path.join(self.dir, f"{name}_{label}")
                    env = dict(os.environ, ET_OPS_XNNPACK_MAX_ISA=isa, ET_OPS_XNNPACK_ONEDNN=onednn)
                    run = subprocess.run([TOOL, "run", path, "--input", input_path, "--output-dir", out_dir],
                                         capture_output=True, text=True, timeout=300, env=env)
                    self.assertEqual(run.returncode, 0, run.stderr)
                    with open(os.path.join(out_dir, "output_0.npy"), "rb") as f:
                        outputs[label] = f.read()
                for label in paths:
                    self.assertEqual(outputs[label], outputs["xnnpack"], label)
        bad = subprocess.run([TOOL, "run", self.programs["resnet18"][5]], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, ET_OPS_XNNPACK_MAX_ISA="sse9"))
        self.assertEqual(bad.returncode, 1)
        self.assertIn("ET_OPS_XNNPACK_MAX_ISA='sse9' is not valid", bad.stderr)
        bad = subprocess.run([TOOL, "run", self.programs["resnet18"][5]], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, ET_OPS_XNNPACK_ONEDNN="no"))
        self.assertEqual(bad.returncode, 1)
        self.assertIn("ET_OPS_XNNPACK_ONEDNN='no' is not valid: use 0", bad.stderr)

    def test_without_the_xnnpack_kernel_set_the_load_names_the_component(self):
        _, _, _, _, _, path, _ = self.programs["resnet18"]
        run = subprocess.run([TOOL, "run", path, "--kernels", "portable,quantized"], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(run.returncode, 1)
        for text in ("et_xnnpack::conv2d.out", "kernels_xnnpack", "et-kernels-xnnpack", "packaging"):
            self.assertIn(text, run.stderr)

    def test_the_command_line_exports_for_the_backend(self):
        out_dir = os.path.join(self.dir, "cli")
        run = subprocess.run([harness.sys.executable, "-m", "et_ops.export", "--model", "cnn", "--backend", "xnnpack",
                              "--output-dir", out_dir], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        program_path = next(line for line in run.stdout.splitlines() if line.endswith(".etp"))
        self.assertIn("et_xnnpack::conv2d.out", et_ops.load(program_path).operators)


if __name__ == "__main__":
    harness.main("python_xnnpack_backend")
