"""The whole job: train, quantize, export, classify the held-out digits every way, compare."""

import os
from dataclasses import dataclass, field

import numpy as np
import torch

import et_ops.export as ex

from . import data, model, pytorch, report, runners

PYTORCH_QUANTIZED = "PyTorch quantized"


@dataclass
class Row:
    name: str
    labels: np.ndarray  # int64 [test images]
    seconds: float  # median latency per image


@dataclass
class Results:
    rows: list
    test_labels: np.ndarray
    files: dict = field(default_factory=dict)  # what was written: description -> path

    def row(self, prefix):
        return next(r for r in self.rows if r.name.startswith(prefix))

    def failures(self, min_accuracy, max_differences):
        """What falls short: an et_ops row below `min_accuracy` on the held-out digits, or with more than
        `max_differences` labels unlike PyTorch's quantized model's."""
        quantized = self.row(PYTORCH_QUANTIZED)
        found = []
        for row in self.rows:
            if not row.name.startswith("et_ops"):
                continue
            accuracy = float(np.mean(row.labels == self.test_labels))
            differences = int(np.sum(row.labels != quantized.labels))
            if accuracy < min_accuracy:
                found.append(f"{row.name}: {100 * accuracy:.1f} % of the held-out digits, below "
                             f"{100 * min_accuracy:.0f} %")
            if differences > max_differences:
                found.append(f"{row.name}: {differences} labels unlike {quantized.name}'s, more than {max_differences}")
        return found

    def table(self):
        return report.table(self.rows, self.test_labels, self.row(PYTORCH_QUANTIZED).name)


def example_inputs():
    """What the program takes: one image."""
    return (torch.zeros(1, *data.IMAGE_SHAPE),)


def export_programs(float_model, calibration, output_dir):
    """Quantizes the model (et_ops.export.quantize, calibrated on `calibration`) and writes its program for each
    backend into output_dir; returns backend -> path."""
    example = example_inputs()
    reference = ex.quantize(float_model, example, calibration)
    programs = {}
    for backend, file in (("reference", "digits.etp"), ("xnnpack", "digits_xnnpack.etp")):
        programs[backend] = os.path.join(output_dir, file)
        ex.export(reference, example, name="digits", backend=backend).save(programs[backend])
    return programs


def pytorch_rows(float_model, calibration, images):
    """PyTorch float, and PyTorch's quantized model on the fastest of its engines here."""
    rows = [Row("PyTorch float", *pytorch.classify(float_model, images))]
    quantized = [Row(f"{PYTORCH_QUANTIZED} ({engine})",
                     *pytorch.classify(pytorch.quantized_model(float_model, example_inputs(), calibration, engine),
                                       images, engine))
                 for engine in pytorch.ENGINES]
    return rows + [min(quantized, key=lambda row: row.seconds)]


def et_ops_rows(et_ops, classify, programs, images_path, output_dir, count):
    """`et-ops run --batch` on both programs (xnnpack on 1 and 2 threads), and the C++ application on both."""
    rows = []
    for backend, threads in (("reference", 1), ("xnnpack", 1), ("xnnpack", 2)):
        outputs = os.path.join(output_dir, f"et_ops_{backend}_{threads}t")
        rows.append(Row(f"et_ops {backend}, {threads} thread{'s' if threads > 1 else ''} (et-ops run)",
                        *runners.et_ops_run(et_ops, programs[backend], images_path, outputs, count, threads)))
    if classify:
        for backend in ("reference", "xnnpack"):
            labels_path = os.path.join(output_dir, f"classify_{backend}_labels.npy")
            row = Row(f"et_ops {backend}, 1 thread (C++ classify)",
                      *runners.classify_run(classify, programs[backend], images_path, labels_path, count))
            same_program = next(r for r in rows if r.name.startswith(f"et_ops {backend}, 1 thread"))
            if not np.array_equal(row.labels, same_program.labels):
                raise RuntimeError(f"the C++ application and et-ops run label the images of {programs[backend]} "
                                   "differently: they run the same program with the same kernels")
            rows.append(row)
    return rows


@dataclass
class Trained:
    split: data.Split
    float_model: torch.nn.Module
    calibration: list  # batches of training images
    programs: dict  # backend -> path
    files: dict  # what was written: description -> path


def train_and_export(output_dir, epochs=model.EPOCHS, log=print):
    """Trains the model, exports both programs and writes the held-out digits into output_dir."""
    os.makedirs(output_dir, exist_ok=True)
    split = data.load_split()
    log(f"digits: {len(split.train_labels)} training and {len(split.test_labels)} held-out images; "
        f"training {epochs} epoch(s)")
    float_model = model.train(split.train_images, split.train_labels, epochs)
    files = {"trained model (PyTorch state_dict)": os.path.join(output_dir, "digits_cnn.pt")}
    torch.save(float_model.state_dict(), files["trained model (PyTorch state_dict)"])
    calibration = model.calibration_batches(split.train_images)
    programs = export_programs(float_model, calibration, output_dir)
    files["program, reference backend"] = programs["reference"]
    files["program, xnnpack backend"] = programs["xnnpack"]
    files[f"one held-out image, a {split.test_labels[0]} (float32 [1, 1, 8, 8])"] = os.path.join(
        output_dir, "test_image_0.npy")
    np.save(os.path.join(output_dir, "test_image_0.npy"), split.test_images[:1])
    files["held-out images, one batch (float32 [N, 1, 1, 8, 8])"] = os.path.join(output_dir, "test_images.npy")
    runners.save_batch(os.path.join(output_dir, "test_images.npy"), split.test_images)
    files["held-out labels (int64 [N])"] = os.path.join(output_dir, "test_labels.npy")
    np.save(files["held-out labels (int64 [N])"], split.test_labels)
    return Trained(split, float_model, calibration, programs, files)


def run(output_dir, et_ops, classify=None, epochs=model.EPOCHS, log=print):
    """The whole job into output_dir: train_and_export, then the held-out digits classified every way and a
    chart. Returns the Results (the rows of the table and the files)."""
    trained = train_and_export(output_dir, epochs, log)
    split, files = trained.split, trained.files
    log("classifying the held-out digits with PyTorch, et-ops run" + (" and the C++ application" if classify else ""))
    rows = pytorch_rows(trained.float_model, trained.calibration, split.test_images)
    rows += et_ops_rows(et_ops, classify, trained.programs, os.path.join(output_dir, "test_images.npy"), output_dir,
                        len(split.test_labels))
    results = Results(rows, split.test_labels, files)
    shown = results.row("et_ops xnnpack, 1 thread")
    files["chart"] = report.draw_chart(os.path.join(output_dir, "digits.png"), split.test_images,
                                       split.test_labels, shown.labels,
                                       "held-out digits and the label et_ops (xnnpack backend) gave them")
    return results
