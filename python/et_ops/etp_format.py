"""The framing of et_ops program files (.etp, format versions 1 and 2), standard library only.

The layout: the magic ``ETOP``, a u32 version, a u64 header size H, H bytes
of UTF-8 JSON, zero padding to the next multiple of 64, then the data segment
holding the constants, each at a 64-byte aligned offset. `read_header` is the
Python reader of that framing: et_ops.etp reads programs with it, and the
build reads the operators of -Dselected_programs with it before the package
exists.
"""

import json
import struct

MAGIC = b"ETOP"
FORMAT_VERSION = 2  # the newest version written and read
SUPPORTED_VERSIONS = (1, 2)
ALIGNMENT = 64
PREAMBLE = struct.Struct("<4sIQ")


def align(offset):
    return (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def read_header(data):
    """The JSON header of .etp bytes and the offset of the data segment; raises ValueError naming what is wrong."""
    if len(data) < PREAMBLE.size:
        raise ValueError(f"truncated: {len(data)} bytes, shorter than the {PREAMBLE.size}-byte preamble")
    magic, version, header_size = PREAMBLE.unpack_from(data)
    if magic != MAGIC:
        raise ValueError(f"wrong magic {magic!r}, expected {MAGIC!r}")
    if version not in SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported format version {version}")
    header_end = PREAMBLE.size + header_size
    if header_end > len(data):
        raise ValueError(f"header of {header_size} bytes runs past the end of the file")
    return json.loads(data[PREAMBLE.size:header_end].decode("utf-8")), align(header_end)


def operators(header):
    """The operators a program's instructions call, each once, in order of first use."""
    names = []
    for instruction in header.get("instructions", ()):
        if instruction["op"] not in names:
            names.append(instruction["op"])
    return names
