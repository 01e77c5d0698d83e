"""The operators of a kernel set as its src/kernels/<set>/operators.def lists
them (read by scripts/operator_table.py, the tables' one reader), for tests
that count them."""
import os
import sys

SOURCE_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "scripts"))
import operator_table  # noqa: E402


def operators_in_def(component):
    """Operator names listed in src/kernels/<component>/operators.def."""
    path = os.path.join(SOURCE_ROOT, "src", "kernels", component, "operators.def")
    return [operator_table.parse_schema(schema, function)[0] for function, schema, _ in operator_table.read_table(path)]
