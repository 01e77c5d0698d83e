"""The exporter (python3 -m et_ops.export) and the programs it writes.

Each model is exported once into a temporary directory through the command
line; the tests read those files back, run the program through the et_ops
module, and compare with the eager float reference and with a simulation of
the quantized graph.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import harness
import et_ops
from et_ops import etp, export

MODELS = {"mlp": "qmlp", "cnn": "qcnn"}
ALLOWED_OPERATORS = set(harness.operators_in_def("quantized")) | set(harness.operators_in_def("portable"))
Q = "quantized_decomposed::"


def run_exporter(model, output_dir):
    return subprocess.run([sys.executable, "-m", "et_ops.export", "--model", model, "--output-dir", output_dir],
                          capture_output=True, text=True, timeout=300)


def read_all(directory):
    """{file name: bytes} of every file in `directory`."""
    contents = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            contents[name] = f.read()
    return contents


class ExportedModel:
    """The four files of one model, exported through the command line."""

    def __init__(self, model, directory):
        result = run_exporter(model, directory)
        if result.returncode != 0:
            raise RuntimeError(f"export of {model} failed:\n{result.stderr}")
        self.model = model
        self.paths = export.output_paths(MODELS[model], directory)
        self.printed_paths = result.stdout.split()
        self.program_file = etp.read_program(self.paths["program"])
        self.example = np.load(self.paths["input"])
        self.reference = np.load(self.paths["reference"])
        with open(self.paths["quantization"], encoding="utf-8") as f:
            self.quantization = json.load(f)

    @property
    def step(self):
        return self.quantization["tolerance"]["output_step"]


def setUpModule():
    global WORK_DIR, EXPORTED
    WORK_DIR = tempfile.mkdtemp(prefix="et_ops_exporter_test_")
    EXPORTED = {model: ExportedModel(model, os.path.join(WORK_DIR, "first")) for model in MODELS}


def tearDownModule():
    shutil.rmtree(WORK_DIR)


class CommandLineTest(unittest.TestCase):
    def test_writes_and_prints_the_four_files(self):
        for model, exported in EXPORTED.items():
            self.assertEqual(exported.printed_paths, list(exported.paths.values()))
            for path in exported.paths.values():
                self.assertTrue(os.path.getsize(path) > 0, path)

    def test_same_command_writes_byte_identical_files(self):
        second = os.path.join(WORK_DIR, "second")
        for model in MODELS:
            self.assertEqual(run_exporter(model, second).returncode, 0)
        self.assertEqual(read_all(os.path.join(WORK_DIR, "first")), read_all(second))

    def test_unknown_model_is_a_usage_error(self):
        result = run_exporter("resnet", os.path.join(WORK_DIR, "unused"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("invalid choice", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(WORK_DIR, "unused")))


class ProgramFileTest(unittest.TestCase):
    """What the .etp files contain, read without the C++ runtime."""

    def test_uses_quantized_decomposed_operators_and_nothing_unknown(self):
        for model, exported in EXPORTED.items():
            operators = exported.program_file.operators
            for op in ("quantize_per_tensor.out", "dequantize_per_tensor.out", "dequantize_per_channel.out"):
                self.assertIn(Q + op, operators, model)
            self.assertLessEqual(set(operators), ALLOWED_OPERATORS, model)

    def test_weights_are_int8_constants_dequantized_per_channel(self):
        for model, exported in EXPORTED.items():
            header = exported.program_file.header
            per_channel = [i for i in header["instructions"] if i["op"] == Q + "dequantize_per_channel.out"]
            self.assertEqual(len(per_channel), 2, model)
            for instruction in per_channel:
                weight, scales, zero_points = (header["values"][a] for a in instruction["args"][:3])
                self.assertEqual(weight["dtype"], "int8")
                self.assertIn("data", weight)
                self.assertEqual(scales["dtype"], "float64")
                self.assertEqual(zero_points["dtype"], "int64")
                self.assertEqual(header["values"][instruction["args"][6]], {"type": "scalar_type", "value": "int8"})
                weights = exported.program_file.constants[instruction["args"][0]]
                self.assertTrue(np.all(np.abs(weights.astype(np.int64)) <= 127))
                self.assertEqual(np.abs(weights.astype(np.int64)).max(), 127)

    def test_values_have_static_shapes_and_only_constants_have_data(self):
        for model, exported in EXPORTED.items():
            header = exported.program_file.header
            written = set()
            for instruction in header["instructions"]:
                written.add(instruction["args"][-1])
            for index, value in enumerate(header["values"]):
                if value["type"] != "tensor":
                    continue
                self.assertTrue(all(isinstance(s, int) and s > 0 for s in value["sizes"]), (model, index))
                if "data" in value:
                    self.assertNotIn(index, header["inputs"])
                    self.assertNotIn(index, written, f"{model}: constant {index} is written by an instruction")
            for index in header["inputs"] + header["outputs"]:
                self.assertNotIn("data", header["values"][index])

    def test_constants_are_64_byte_aligned_and_sized(self):
        for model, exported in EXPORTED.items():
            with open(exported.paths["program"], "rb") as f:
                data = f.read()
            header_size = int.from_bytes(data[8:16], "little")
            segment = (16 + header_size + 63) // 64 * 64
            self.assertTrue(all(b == 0 for b in data[16 + header_size:segment]))
            for value in exported.program_file.header["values"]:
                if "data" in value:
                    offset, nbytes = value["data"]["offset"], value["data"]["nbytes"]
                    self.assertEqual(offset % 64, 0)
                    itemsize = etp.NUMPY_DTYPES[value["dtype"]].itemsize
                    self.assertEqual(nbytes, int(np.prod(value["sizes"])) * itemsize)
                    self.assertLessEqual(segment + offset + nbytes, len(data))

    def test_header_metadata_matches_the_quantization_report(self):
        for model, exported in EXPORTED.items():
            metadata = exported.program_file.header["metadata"]
            self.assertEqual(metadata["model"], model)
            self.assertEqual(metadata["output_scale"], exported.quantization["output"]["scale"])
            self.assertEqual(metadata["output_zero_point"], exported.quantization["output"]["zero_point"])


class AccuracyTest(unittest.TestCase):
    """Running the exported programs through the et_ops module."""

    def run_program(self, exported):
        program = et_ops.load(exported.paths["program"])
        (output,) = program.run([exported.example])
        self.assertEqual(output.shape, exported.reference.shape)
        self.assertEqual(output.dtype, np.float32)
        return output

    def test_within_one_output_step_of_the_eager_float_reference(self):
        for model, exported in EXPORTED.items():
            output = self.run_program(exported)
            worst = float(np.abs(output.astype(np.float64) - exported.reference).max())
            print(f"{model}: worst |program - float reference| = {worst:.6g} "
                  f"= {worst / exported.step:.3f} output steps (step {exported.step:.6g})")
            self.assertLessEqual(worst, exported.step, model)

    def test_output_is_on_the_output_quantization_grid(self):
        for model, exported in EXPORTED.items():
            q = exported.quantization["output"]
            levels = self.run_program(exported) / np.float32(q["scale"]) + q["zero_point"]
            np.testing.assert_allclose(levels, np.rint(levels), atol=1e-3)
            self.assertTrue(np.all((np.rint(levels) >= q["quant_min"]) & (np.rint(levels) <= q["quant_max"])))

    def test_agrees_with_the_simulated_quantized_graph(self):
        # The simulation computes the same graph with the reference numerics;
        # only float summation order differs, which can move a value across a
        # rounding boundary: then the two differ by exactly one step.
        for model, exported in EXPORTED.items():
            simulated = export.quantize_model(model).simulate()
            output = self.run_program(exported)
            steps = np.rint(np.abs(output.astype(np.float64) - simulated) / exported.step)
            print(f"{model}: {int(np.count_nonzero(steps))} of {steps.size} outputs differ from the simulation "
                  f"(by at most {int(steps.max())} step)")
            self.assertLessEqual(steps.max(), 1, model)
            self.assertLessEqual(np.count_nonzero(steps), max(1, steps.size // 20), model)

    def test_python_and_the_cpp_command_line_give_byte_identical_outputs(self):
        for model, exported in EXPORTED.items():
            output_dir = os.path.join(WORK_DIR, "cli_" + model)
            subprocess.run([os.environ["ET_OPS_TOOL"], "run", exported.paths["program"], "--input",
                            exported.paths["input"], "--output-dir", output_dir],
                           check=True, capture_output=True, timeout=120)
            from_cpp = np.load(os.path.join(output_dir, "output_0.npy"))
            from_python = self.run_program(exported)
            self.assertEqual(from_cpp.dtype, from_python.dtype)
            self.assertEqual(from_cpp.shape, from_python.shape)
            self.assertEqual(from_cpp.tobytes(), from_python.tobytes(), model)

    def test_the_reference_is_the_float_model(self):
        for model, exported in EXPORTED.items():
            quantized_model = export.quantize_model(model)
            float32_output = quantized_model.module(quantized_model.example).detach().numpy()
            np.testing.assert_allclose(exported.reference, float32_output, rtol=0, atol=1e-5)
            np.testing.assert_array_equal(exported.example, quantized_model.example.numpy())


if __name__ == "__main__":
    harness.main("python_exporter")
