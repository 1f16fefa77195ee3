#!/usr/bin/env python3
"""Which sections of two cubins differ (session 77), for screens of code-generation options on the
CPU machine, whose nvcc wheel has no cuobjdump: two builds whose `.text.<kernel>` sections are equal
run the same SASS, whatever else (for example `.note.nv.tkinfo`, which records the command line)
differs.

Usage: kernels/tools/cubin_sections_diff.py A.cubin B.cubin
Prints the number of kernels (`.text.*` sections), how many of them differ, and every differing
section by name. Exit status 0 when every `.text.*` section is equal, 1 otherwise.
"""
import sys

from cubin_elf import sections


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = (sections(open(path, "rb").read()) for path in sys.argv[1:])
    names = sorted(set(a) | set(b))
    texts = [n for n in names if n.startswith(".text.")]
    differ = [n for n in names if a.get(n) != b.get(n)]
    text_differ = [n for n in differ if n.startswith(".text.")]
    print(f"{len(texts)} kernels, {len(text_differ)} with other code; differing sections: {differ or 'none'}")
    return 1 if text_differ else 0


if __name__ == "__main__":
    sys.exit(main())
