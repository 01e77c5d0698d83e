"""et_ops' side: a held-out split through `et-ops run --batch` and through the C++ application (classify)."""

import os
import re
import subprocess

import numpy as np

from . import data

# `et-ops run --batch` and classify both print "median <time> per input|image".
_MEDIAN = re.compile(r"median ([0-9.]+) (us|ms) per (?:input|image)")


def _run(command):
    try:
        result = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"cannot run {command[0]}: {e}") from None
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed (exit {result.returncode}):\n{result.stderr}")
    return result.stdout


def _median_seconds(stdout, command):
    match = _MEDIAN.search(stdout)
    if match is None:
        raise RuntimeError(f"{command}: no 'median ... per input' in its output:\n{stdout}")
    return float(match.group(1)) * (1e-6 if match.group(2) == "us" else 1e-3)


def et_ops_run(et_ops, program, images_path, output_dir, count, threads=1):
    """(labels, median seconds per image) of `et-ops run PROGRAM --batch` on the images in images_path."""
    stdout = _run([et_ops, "run", program, "--batch", "--input", images_path, "--output-dir", output_dir,
                   "--threads", threads])
    scores = data.load_array(os.path.join(output_dir, "output_0.npy"), "et-ops output")
    return data.labels_from_scores(scores, count, f"{output_dir}/output_0.npy"), _median_seconds(stdout, "et-ops run")


def classify_run(classify, program, images_path, labels_path, count, threads=1):
    """(labels, median seconds per image) of the C++ application `classify` on the images in images_path."""
    stdout = _run([classify, program, images_path, labels_path, threads])
    labels = data.check_labels(data.load_array(labels_path, "classify output"), count, labels_path)
    return labels, _median_seconds(stdout, "classify")


def save_batch(path, images):
    """Writes `images` (float32 [N, 1, 8, 8]) as one `--batch` input of a program that takes one image
    [1, 1, 8, 8]: the images stacked along a new first dimension, [N, 1, 1, 8, 8]."""
    np.save(path, data.check_images(images)[:, None])
