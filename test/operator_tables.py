"""The operators of a kernel set as its src/kernels/<set>/operators.def lists
them (the one list of each set's operators), for tests that count them."""
import os
import re

SOURCE_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def operators_in_def(component):
    """Operator names listed in src/kernels/<component>/operators.def."""
    with open(os.path.join(SOURCE_ROOT, "src", "kernels", component, "operators.def"), encoding="utf-8") as f:
        code = "".join(line for line in f if not line.lstrip().startswith("//"))
    return re.findall(r'ET_OPS_OPERATOR\(\s*\w+,\s*"([^"(]+)\(', code)
