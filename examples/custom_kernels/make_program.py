#!/usr/bin/env python3
"""Writes custom.etp, a program that uses acme_kernels' operators next to
et_ops's own (portable and quantized), and custom_input_0.npy, an input.

    out = dequantize(quantize(relu(shift(scale(x, 0.5), 1))))

Usage: make_program.py DIRECTORY (with the et_ops package importable).
"""
import os
import sys

import numpy as np
from et_ops.etp import ProgramBuilder


def build():
    b = ProgramBuilder("custom")
    x = b.tensor("float32", [2, 4])
    scaled, shifted, rectified, out = (b.tensor("float32", [2, 4]) for _ in range(4))
    quantized = b.tensor("int8", [2, 4])
    b.input(x)
    b.instruction("acme::scale.out", [x, b.double(0.5), scaled])
    b.instruction("acme::shift.out", [scaled, b.integer(1), shifted])
    b.instruction("aten::relu.out", [shifted, rectified])
    qparams = [b.double(0.05), b.integer(0), b.integer(-128), b.integer(127), b.scalar_type("int8")]
    b.instruction("quantized_decomposed::quantize_per_tensor.out", [rectified] + qparams + [quantized])
    b.instruction("quantized_decomposed::dequantize_per_tensor.out", [quantized] + qparams + [b.none(), out])
    b.output(out)
    return b


def main():
    directory = sys.argv[1]
    build().write(os.path.join(directory, "custom.etp"))
    x = np.array([[-4.0, -1.0, 0.0, 0.25], [1.0, 2.5, 3.0, 10.0]], dtype=np.float32)
    np.save(os.path.join(directory, "custom_input_0.npy"), x)


if __name__ == "__main__":
    main()
