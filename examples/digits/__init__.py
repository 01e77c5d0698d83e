"""The main job on real data: handwritten digits, trained with PyTorch, run by et_ops.

The digits are the UCI handwritten digits that python3-sklearn ships
(1,797 labelled 8x8 images, sklearn/datasets/data/digits.csv.gz). A small
CNN is trained on four fifths of them, quantized with PyTorch's own flow
(et_ops.export.quantize), exported for the reference and xnnpack backends,
and the held-out fifth is classified by PyTorch (float and quantized), by
`et-ops run --batch` and by a C++ application built against et_ops.

    PYTHONPATH=<et_ops>/examples:<et_ops python package> /usr/bin/python3 -m digits demo \\
        --output-dir DIR --et-ops PATH/et-ops [--classify PATH/classify] [--epochs N]

scripts/demo.sh runs it; docs/quickstart.md trains the same model with
`python3 -m digits train`.
"""
