#!/usr/bin/env python3
"""Generates what the build derives from the operator tables.

The tables are src/kernels/NAME/operators.def, one row per operator:

    // What the kernel computes (optional comment lines, carried into the header).
    ET_OPS_OPERATOR(kernel_function, "namespace::name.overload(ARGUMENTS) -> RETURNS")

and include/et_ops/dtypes.def, one row per element type. From them:

  header    et_ops/kernels/NAME_operators.h: the operator name constants
            (op_name::kernel_function) and, for a set of plain kernels, the typed
            entry points, only those of the selected operators
  rows      the rows of one table that a selection keeps, for the library's
            kernel array (src/kernels/common/library.cpp)
  python    et_ops/_operators.py: every operator of every table, by kernel
            set and kernel function, with its schema (argument names,
            positions, types, which are written)
  dtypes    et_ops/_dtypes.py: the element types, from dtypes.def
  select    the operators of a selection, one per line, checked against
            the tables

A selection is the union of files of operator names, one per line (`#`
starts a comment); without one, every operator is selected.
"""
import argparse
import importlib.util
import os
import re
import sys

ROW = re.compile(r'^[ \t]*ET_OPS_OPERATOR\(\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)', re.M)
DTYPE_ROW = re.compile(r'^ET_OPS_DTYPE\((\w+), (\w+), "(\w+)", ([\w:]+), (\d+), "([<|][a-z]\d)", (true|false), (true|false)\)$',
                       re.M)

class TableError(Exception):
    pass

# ---- reading ----

def read_table(path):
    """The rows of an operators.def: (function, schema, the comment lines right above the row)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rows = []
    for match in ROW.finditer(text):  # a row may span lines
        comment = []
        for line in reversed(text[:match.start()].rstrip("\n").split("\n")):
            if not line.strip().startswith("//"):
                break
            comment.insert(0, line.strip()[2:].strip())
        rows.append((match.group(1), match.group(2), comment))
    if not rows:
        raise TableError(f"{path}: no ET_OPS_OPERATOR rows")
    return rows

def split_top_level(text):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]

ARGUMENT = re.compile(r"^(\w+)(\([^)]*\))?((?:\[\d*\]|\?)*) (\w+)(?:\s*=\s*(.+))?$")

def parse_schema(schema, where):
    """name, [argument dicts] of a schema (the grammar of et_ops/schema.h)."""
    match = re.match(r"^(\w+::\w+(?:\.\w+)?)\((.*)\)\s*->\s*(.+)$", schema)
    if not match:
        raise TableError(f"{where}: the schema does not read as NAMESPACE::NAME[.OVERLOAD](ARGUMENTS) -> RETURNS")
    arguments, keyword_only = [], False
    for text in split_top_level(match.group(2)):
        if text == "*":
            keyword_only = True
            continue
        a = ARGUMENT.match(text)
        if not a:
            raise TableError(f"{where}: argument '{text}' does not read as TYPE NAME[=DEFAULT]")
        base, alias, suffixes, name, default = a.groups()
        arguments.append({"name": name, "position": len(arguments), "type": base + (alias or "") + suffixes,
                          "base_type": base, "suffixes": suffixes, "written": "!" in (alias or ""),
                          "keyword_only": keyword_only, "default": default})
    return match.group(1), arguments

# The C++ parameter type of each schema type (et_ops/kernel_library.h's
# KernelArgument mapping; kernel<&fn>() checks every entry point against its
# schema at compile time, so a wrong entry here fails the build).
def cpp_type(argument, where):
    base, suffixes = argument["base_type"], argument["suffixes"]
    base = "int" if base == "SymInt" else base
    listed = "[" in suffixes
    if listed and "?" in suffixes.split("[")[0]:  # Tensor?[]: a list of optional tensors
        element = {"Tensor": "OptionalTensorList"}.get(base)
    elif listed:
        element = {"Tensor": "TensorList", "int": "IntList"}.get(base)
    else:
        element = {"Tensor": "TensorRef", "int": "int64_t", "float": "double", "bool": "bool", "Scalar": "Scalar",
                   "ScalarType": "DType", "str": "std::string_view"}.get(base)
    if element is None:
        raise TableError(f"{where}: argument '{argument['name']}' has type '{argument['type']}', which has no C++ "
                         "parameter type in scripts/operator_table.py (cpp_type) and et_ops/kernel_library.h")
    return f"std::optional<{element}>" if suffixes.endswith("?") else element

def read_selection(paths):
    selected = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                name = line.split("#", 1)[0].strip()
                if name and name not in selected:
                    selected.append(name)
    return selected

def program_operators(paths):
    """The operators the .etp files at `paths` call, read with et_ops.etp_format (standard library only)."""
    spec = importlib.util.spec_from_file_location(
        "etp_format", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "et_ops", "etp_format.py"))
    etp_format = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(etp_format)
    names = []
    for path in paths:
        with open(path, "rb") as f:
            try:
                header, _ = etp_format.read_header(f.read())
            except ValueError as e:
                raise TableError(f"{path}: {e}") from None
        names += [name for name in etp_format.operators(header) if name not in names]
    return names

def operator_names(table_paths):
    names = {}
    for path in table_paths:
        for function, schema, _ in read_table(path):
            name, _ = parse_schema(schema, f"{path}: {function}")
            names[name] = path
    return names

def selected_rows(rows, selection_paths):
    if not selection_paths:
        return rows
    selected = set(read_selection(selection_paths))
    return [row for row in rows if parse_schema(row[1], row[0])[0] in selected]

# ---- writing ----

def write(path, text):
    """Writes only when the text changed, so dependents rebuild only then."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

def wrap_declaration(head, parameters):
    lines, line = [], head
    for i, p in enumerate(parameters):
        piece = p + (", " if i + 1 < len(parameters) else ");")
        if len(line) + len(piece.rstrip()) > 118:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece
    lines.append(line)
    return "\n".join(lines)

def shown(path):
    """A table's path as the generated files name it: from the source root."""
    path = path.replace(os.sep, "/")
    for root in ("src/kernels/", "include/et_ops/"):
        if root in path:
            return root + path.split(root, 1)[1]
    return path

def header_text(set_name, table, rows, entry_points):
    guard = f"ET_OPS_KERNELS_{set_name.upper()}_OPERATORS_H"
    out = [f"// Generated by the build from {shown(table)}: do not",
           "// edit. The operators of libet_kernels_" + set_name + ".so: op_name::KERNEL, the name of",
           "// each operator" + (", and the typed entry point of each operator this build selected:"
                                 if entry_points else "."),
           *(["// the context first, then the schema's arguments in order."] if entry_points else []),
           f"#ifndef {guard}", f"#define {guard}", "",
           "#include <cstdint>", "#include <optional>", "#include <string_view>", "",
           '#include "et_ops/abi.h"', '#include "et_ops/dtype.h"', '#include "et_ops/export.h"',
           '#include "et_ops/int_list.h"', '#include "et_ops/kernel_context.h"', '#include "et_ops/registry.h"',
           '#include "et_ops/scalar.h"', '#include "et_ops/tensor.h"', "",
           f"namespace et_ops::kernels::{set_name} {{", "", "namespace op_name {"]
    for function, schema, _ in table_rows(table):
        name, _ = parse_schema(schema, function)
        out.append(f'inline constexpr const char {function}[] = "{name}";')
    out.append("}  // namespace op_name")
    out += ["", f'inline constexpr const char* kComponent = "kernels_{set_name}";', "",
            "// Registers every kernel of this library into the process registry, with",
            "// this library's path as origin. Idempotent.",
            "[[nodiscard]] ET_OPS_KERNELS_API RegistrationResult register_kernels();", "",
            "// The library's manifest (component, version, records with schema,",
            "// fingerprint and, for prepared kernels, their functions), as the",
            "// loadable-library entry point returns it.",
            "ET_OPS_KERNELS_API const et_ops_manifest& manifest();"]
    if entry_points:
        for function, schema, comment in rows:
            _, arguments = parse_schema(schema, f"{shown(table)}: {function}")
            out.append("")
            out += [f"// {line}".rstrip() for line in comment]
            parameters = ["KernelContext& ctx"] + [f"{cpp_type(a, f'{table}: {function}')} {a['name']}"
                                                   for a in arguments]
            out.append(wrap_declaration(f"ET_OPS_KERNELS_API bool {function}(", parameters))
    out += ["", f"}}  // namespace et_ops::kernels::{set_name}", "", f"#endif  // {guard}", ""]
    return "\n".join(out)

_tables = {}

def table_rows(path):
    if path not in _tables:
        _tables[path] = read_table(path)
    return _tables[path]

def rows_text(table, rows):
    out = [f"// Generated by the build from {shown(table)}: the rows this build selected."]
    for function, schema, _ in rows:
        out.append(f'ET_OPS_OPERATOR({function}, "{schema}")')
    return "\n".join(out) + "\n"

def python_text(tables):
    out = ['"""The operator tables of et_ops\' kernel sets (generated by the build from',
           'src/kernels/*/operators.def: do not edit).',
           "",
           "One namespace per kernel set (portable, quantized, xnnpack) holds an Operator",
           "per row, named by the row's kernel function: `portable.add_out` is the string",
           "'aten::add.out' that also knows its schema. OPERATORS maps every name to its",
           "Operator. The exporter's lowering names operators and reads their arguments",
           'through them, never by literal names or positions."""',
           "",
           "from collections import namedtuple",
           "from types import SimpleNamespace",
           "",
           'Argument = namedtuple("Argument", "name position type written keyword_only default")',
           'Argument.__doc__ = "A schema argument: its position among an instruction\'s arguments, whether the kernel writes it."',
           "",
           "",
           "class Operator(str):",
           '    """An operator\'s name (a str, as programs spell it) with its kernel set, kernel function,',
           '    schema text and arguments."""',
           "",
           "    def __new__(cls, name, kernel_set, function, schema, arguments):",
           "        self = super().__new__(cls, name)",
           "        self.kernel_set, self.function, self.schema, self.arguments = kernel_set, function, schema, arguments",
           "        return self",
           "",
           "    def position(self, argument):",
           '        """The position of the argument called `argument`."""',
           "        for a in self.arguments:",
           "            if a.name == argument:",
           "                return a.position",
           "        raise KeyError(f\"{self} has no argument {argument!r}\")",
           "",
           "    def outputs(self):",
           '        """The arguments the kernel writes, in order."""',
           "        return tuple(a for a in self.arguments if a.written)",
           "",
           "    def read(self, args):",
           '        """An instruction\'s argument list as a namespace: argument name -> value."""',
           "        return SimpleNamespace(**{a.name: args[a.position] for a in self.arguments})",
           ""]
    names = []
    for set_name, path in tables:
        out += ["", f"{set_name} = SimpleNamespace("]
        for function, schema, _ in table_rows(path):
            name, arguments = parse_schema(schema, f"{shown(path)}: {function}")
            args = ", ".join(
                f"Argument({a['name']!r}, {a['position']}, {a['type']!r}, {a['written']}, {a['keyword_only']}, "
                f"{a['default']!r})" for a in arguments)
            out.append(f"    {function}=Operator({name!r}, {set_name!r}, {function!r},")
            out.append(f"                        {schema!r},")
            out.append(f"                        ({args},)),")
        out.append(")")
        names.append(set_name)
    out += ["", "OPERATORS = {op: op for kernel_set in (" + ", ".join(names) + ") for op in vars(kernel_set).values()}",
            ""]
    return "\n".join(out)


def read_dtypes(path):
    with open(path, encoding="utf-8") as f:
        rows = [m.groups() for m in DTYPE_ROW.finditer(f.read())]
    if not rows:
        raise TableError(f"{path}: no ET_OPS_DTYPE rows")
    return rows

def dtypes_text(path):
    out = ['"""The element types of et_ops (generated by the build from include/et_ops/dtypes.def:',
           'do not edit).',
           "",
           "DTYPES: (name, size in bytes, .npy descriptor, floating, NumPy has it), in the",
           "order of the C ABI's ET_OPS_DTYPE_* values. NumPy has no bfloat16: its",
           'descriptor is that of the raw bits, uint16."""',
           "",
           "DTYPES = ("]
    for _, _, name, _, size, descr, floating, numpy in read_dtypes(path):
        out.append(f"    ({name!r}, {size}, {descr!r}, {floating == 'true'}, {numpy == 'true'}),")
    out += [")", ""]
    return "\n".join(out)

def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    header = sub.add_parser("header")
    header.add_argument("--set", required=True)
    header.add_argument("--table", required=True)
    header.add_argument("--entry-points", choices=["yes", "no"], required=True)
    header.add_argument("--selection", action="append", default=[])
    header.add_argument("--output", required=True)
    rows = sub.add_parser("rows")
    rows.add_argument("--table", required=True)
    rows.add_argument("--selection", action="append", default=[])
    rows.add_argument("--output", required=True)
    python = sub.add_parser("python")
    python.add_argument("--output", required=True)
    python.add_argument("tables", nargs="+", help="NAME=PATH of each kernel set's operators.def")
    dtypes = sub.add_parser("dtypes")
    dtypes.add_argument("--table", required=True)
    dtypes.add_argument("--output", required=True)
    select = sub.add_parser("select")
    select.add_argument("--output", required=True)
    select.add_argument("--selection", action="append", default=[])
    select.add_argument("--program", action="append", default=[], help="a .etp file whose operators to select")
    select.add_argument("tables", nargs="+", help="NAME=PATH of each kernel set's operators.def")
    args = parser.parse_args(argv)
    try:
        if args.command == "header":
            kept = selected_rows(table_rows(args.table), args.selection)
            write(args.output, header_text(args.set, args.table, kept, args.entry_points == "yes"))
        elif args.command == "rows":
            write(args.output, rows_text(args.table, selected_rows(table_rows(args.table), args.selection)))
        elif args.command == "python":
            write(args.output, python_text([t.split("=", 1) for t in args.tables]))
        elif args.command == "dtypes":
            write(args.output, dtypes_text(args.table))
        elif args.command == "select":
            known = operator_names([t.split("=", 1)[1] for t in args.tables])
            selected = read_selection(args.selection)
            for name in program_operators(args.program):
                if name not in selected:
                    selected.append(name)
            unknown = [name for name in selected if name not in known]
            if unknown:
                raise TableError("the selection names operators that no kernel set's operators.def has: " +
                                 ", ".join(unknown))
            write(args.output, "".join(name + "\n" for name in selected))
    except (TableError, OSError) as e:
        print(f"operator_table.py: {e}", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
