"""The digits job from the command line.

python3 -m digits train --output-dir DIR [--epochs N]
    trains the model, exports digits.etp (reference backend) and
    digits_xnnpack.etp, and writes the held-out digits (test_images.npy, one
    batch for `et-ops run --batch`; test_image_0.npy, one image; test_labels.npy).
python3 -m digits demo --output-dir DIR --et-ops PATH [--classify PATH] [--epochs N]
    all of that, then the held-out digits classified by PyTorch, `et-ops run
    --batch` and the C++ application (examples/digits/classify.cpp): prints
    the table and where the files are, and draws DIR/digits.png. Exits 1
    when an et_ops row gets less than 90 % of the held-out digits right or
    labels more than 2 of them unlike PyTorch's quantized model.
"""

import argparse
import sys
import time

from . import model, pipeline, report

# What a correct program reaches: a tenth is chance; et_ops computes PyTorch's quantized model.
MIN_ACCURACY = 0.90
MAX_DIFFERENCES = 2


def print_files(files):
    print()
    for what, path in files.items():
        print(f"{what}: {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m digits", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("train", "train and export the model"), ("demo", "the whole job, with the table")):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--output-dir", required=True, help="where the model, programs and images go")
        command.add_argument("--epochs", type=int, default=model.EPOCHS,
                             help=f"training epochs (default {model.EPOCHS})")
        if name == "demo":
            command.add_argument("--et-ops", required=True, help="the et-ops tool")
            command.add_argument("--classify", help="the C++ application built from examples/digits/classify.cpp")
    options = parser.parse_args(argv)
    if options.epochs < 1:
        parser.error(f"--epochs must be at least 1, got {options.epochs}")
    started = time.monotonic()
    if options.command == "train":
        print_files(pipeline.train_and_export(options.output_dir, options.epochs).files)
        return 0
    results = pipeline.run(options.output_dir, options.et_ops, options.classify, options.epochs)
    print(f"\nThe {len(results.test_labels)} held-out digits, one image at a time, on {report.machine()}:\n")
    print(results.table())
    print_files(results.files)
    print(f"({time.monotonic() - started:.0f} s)")
    failures = results.failures(MIN_ACCURACY, MAX_DIFFERENCES)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
