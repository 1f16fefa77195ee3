#!/usr/bin/env python3
"""Which sections of two cubins differ (session 77), for screens of code-generation options on the
CPU machine, whose nvcc wheel has no cuobjdump: two builds whose `.text.<kernel>` sections are equal
run the same SASS, whatever else (for example `.note.nv.tkinfo`, which records the command line)
differs.

Usage: bench/cubin_sections_diff.py A.cubin B.cubin
Prints the number of kernels (`.text.*` sections), how many of them differ, and every differing
section by name. Exit status 0 when every `.text.*` section is equal, 1 otherwise.
"""
import struct
import sys


def sections(path):
    """Name -> bytes of every section of a little-endian ELF64 file (NOBITS sections empty)."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a little-endian ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out = {}
    for name_off, kind, _flags, _addr, offset, size, *_ in headers:
        start = names_at + name_off
        name = data[start : data.index(b"\0", start)].decode()
        out[name] = b"" if kind == 8 else data[offset : offset + size]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = sections(sys.argv[1]), sections(sys.argv[2])
    names = sorted(set(a) | set(b))
    texts = [n for n in names if n.startswith(".text.")]
    differ = [n for n in names if a.get(n) != b.get(n)]
    text_differ = [n for n in differ if n.startswith(".text.")]
    print(f"{len(texts)} kernels, {len(text_differ)} with other code; differing sections: {differ or 'none'}")
    return 1 if text_differ else 0


if __name__ == "__main__":
    sys.exit(main())
