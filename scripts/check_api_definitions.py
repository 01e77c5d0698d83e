#!/usr/bin/env python3
"""Writes a C++ program that takes the address of every function the
installed et_ops headers export (declared with ET_OPS_API or
ET_OPS_KERNELS_API), so linking it against the shipped libraries proves
each one has a definition.

Usage: check_api_definitions.py INCLUDE_DIR OUTPUT.cpp
"""
import pathlib
import re
import sys

EXPORT = r"ET_OPS(?:_KERNELS)?_API"
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{")
NAMESPACE_END = re.compile(r"^\}\s*// namespace")
CLASS = re.compile(r"^class " + EXPORT + r" (\w+)")
FREE_FUNCTION = re.compile(r"^(?:\[\[nodiscard\]\] )?" + EXPORT + r" [^(]*?(\w+)\(")
MEMBER = re.compile(r"^\s+(?:static )?[\w:<>,*&][\w:<>,*& ]*?[ *&](\w+)\([^)]*\)?[^{]*$")
# A whole one-line member declaration: return type, name, parameters, qualifiers.
MEMBER_SIGNATURE = re.compile(r"^\s+(static )?([\w:<>,*&][\w:<>,*& ]*?[ *&])(\w+)\(([^)]*)\)\s*(const)?\s*;")
DEFAULT_VALUE = re.compile(r"\s*=\s*[^,]+")


def member_pointer(namespace, class_name, line):
    """A cast that picks this overload of a member function, for code inside `namespace`; None if unparsed."""
    m = MEMBER_SIGNATURE.match(line)
    if not m:
        return None
    static, result, name, parameters, const = m.groups()
    parameters = DEFAULT_VALUE.sub("", parameters)
    pointer = "(*)" if static else f"({class_name}::*)"
    return f"static_cast<{result.strip()} {pointer}({parameters}){' const' if const else ''}>(&{class_name}::{name})"


def logical_lines(text):
    """The header's lines, a declaration whose parameters continue on later lines joined into one."""
    pending = ""
    for line in text.splitlines():
        pending = f"{pending} {line.strip()}" if pending else line
        if pending.count("(") <= pending.count(")") or pending.lstrip().startswith(("//", "#")):
            yield pending
            pending = ""
    if pending:
        yield pending


def exported_names(header):
    """(qualified name, namespace, cast picking this declaration or None) of each exported function."""
    names, namespaces, current_class = [], [], None
    for line in logical_lines(header.read_text()):
        if m := NAMESPACE.match(line):
            namespaces.append(m.group(1))
        elif NAMESPACE_END.match(line) and namespaces:
            namespaces.pop()
        elif m := CLASS.match(line):
            current_class = m.group(1)
        elif current_class and line.startswith("};"):
            current_class = None
        elif m := FREE_FUNCTION.match(line.strip() if not current_class else line):
            if current_class is None:
                names.append(("::".join(namespaces + [m.group(1)]), "::".join(namespaces), None))
        elif current_class and (m := MEMBER.match(line)):
            name = m.group(1)
            if name not in (current_class, "operator") and "=" not in line.split("(")[0]:
                names.append(("::".join(namespaces + [current_class, name]), "::".join(namespaces),
                              member_pointer("::".join(namespaces), current_class, line)))
    return names


def main():
    include_dir, output = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    headers = sorted(include_dir.rglob("*.h"))
    declarations = [d for h in headers for d in exported_names(h)]
    counts = {}
    for name, _, _ in declarations:
        counts[name] = counts.get(name, 0) + 1
    lines = [f"#include <{h.relative_to(include_dir)}>" for h in headers]
    # An overloaded name's address needs its signature: each overload is
    # picked by a cast, written inside its namespace so the types resolve.
    overloads = {(ns, cast, name) for name, ns, cast in declarations if counts[name] > 1}
    for namespace, cast, name in overloads:
        if cast is None:
            sys.exit(f"{name} is overloaded and one of its declarations cannot be parsed: cannot pick it")
    for index, (namespace, cast, name) in enumerate(sorted(overloads)):
        lines.append(f"namespace {namespace} {{ void et_ops_api_overload_{index}() {{ (void){cast}; }} }}")
    lines.append("int main() {")
    lines += [f"  (void)&{n};" for n in sorted({n for n, _, _ in declarations if counts[n] == 1})]
    lines.append("  return 0;\n}")
    output.write_text("\n".join(lines) + "\n")
    print(f"{len(counts)} exported functions ({len(overloads)} overloads) from {len(headers)} headers")


if __name__ == "__main__":
    main()
