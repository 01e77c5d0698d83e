"""What the demo shows: the table of accuracy and speed, and a chart of test digits with et_ops' labels."""

import os
import platform

from . import data


def _cpuinfo(field):
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.split(":", 1)[0].strip() == field)
    except (OSError, StopIteration):
        return ""


def machine():
    """"<CPU model> (<N> cores, <widest SIMD>)", for saying where the numbers were measured."""
    flags = set(_cpuinfo("flags").split())
    simd = ("AVX-512 with VNNI" if {"avx512f", "avx512_vnni"} <= flags else "AVX-512" if "avx512f" in flags
            else "AVX2" if "avx2" in flags else "no AVX2")
    return f"{_cpuinfo('model name') or platform.machine()} ({os.cpu_count()} cores, {simd})"


def table(rows, test_labels, baseline):
    """The Markdown table: per row, accuracy on the held-out images, median latency per image, and on how many
    images the row's label differs from the row named `baseline` (PyTorch's quantized model)."""
    test_labels = data.check_labels(test_labels, len(test_labels), "test labels")
    reference = next(row for row in rows if row.name == baseline)
    lines = ["| model | accuracy | median per image | labels unlike PyTorch quantized |",
             "|---|---:|---:|---:|"]
    for row in rows:
        labels = data.check_labels(row.labels, len(test_labels), f"labels of {row.name}")
        correct = int((labels == test_labels).sum())
        differ = "—" if row is reference else str(int((labels != reference.labels).sum()))
        lines.append(f"| {row.name} | {100 * correct / len(test_labels):.1f} % ({correct}/{len(test_labels)}) "
                     f"| {row.seconds * 1e6:.1f} µs | {differ} |")
    return "\n".join(lines)


def draw_chart(path, images, true_labels, predicted, title, count=16):
    """The first `count` test digits, each titled with the label et_ops gave it (red where it is wrong)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    images = data.check_images(images)
    true_labels = data.check_labels(true_labels, len(images), "test labels")
    predicted = data.check_labels(predicted, len(images), "et_ops labels")
    count = min(count, len(images))
    columns = 8
    rows = -(-count // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(columns * 0.9, rows * 1.1 + 0.4), squeeze=False)
    for i, axis in enumerate(axes.flat):
        axis.axis("off")
        if i >= count:
            continue
        axis.imshow(images[i, 0], cmap="gray_r", vmin=0, vmax=1)
        right = predicted[i] == true_labels[i]
        axis.set_title(str(predicted[i]) if right else f"{predicted[i]} (is {true_labels[i]})",
                       color="black" if right else "red", fontsize=10)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path

