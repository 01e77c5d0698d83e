"""python3 -m digits --output-dir DIR --et-ops PATH [--classify PATH] [--epochs N]: the whole job, its table
and where its files are."""

import argparse
import sys
import time

from . import model, pipeline, report


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m digits", description=__doc__.split(":", 1)[1].strip())
    parser.add_argument("--output-dir", required=True, help="where the model, the programs and the chart go")
    parser.add_argument("--et-ops", required=True, help="the et-ops tool")
    parser.add_argument("--classify", help="the C++ application built from examples/digits/classify.cpp")
    parser.add_argument("--epochs", type=int, default=model.EPOCHS, help=f"training epochs (default {model.EPOCHS})")
    options = parser.parse_args(argv)
    started = time.monotonic()
    results = pipeline.run(options.output_dir, options.et_ops, options.classify, options.epochs)
    print(f"\nThe {len(results.test_labels)} held-out digits, one image at a time, on {report.machine()}:\n")
    print(results.table())
    print()
    for what, path in results.files.items():
        print(f"{what}: {path}")
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
