"""The ELF reading the kernel tools share: a cubin's section headers, its sections by name, and its
kernel entry points. Little-endian ELF64 only (what nvcc writes for sm_90a); anything else stops
the tool with a message.
"""
import struct

SHT_SYMTAB = 2
SHT_NOBITS = 8


def section_headers(cubin):
    """Every section header of an ELF64 cubin: (name, type, flags, addr, offset, size, link, info,
    addralign, entsize)."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise SystemExit("not a 64-bit ELF cubin")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", cubin, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]


def sections(cubin):
    """Section name -> its bytes (empty for a NOBITS section such as .nv.shared.*)."""
    headers = section_headers(cubin)
    (shstrndx,) = struct.unpack_from("<H", cubin, 0x3E)
    names_at = headers[shstrndx][4]
    out = {}
    for name_off, kind, _flags, _addr, offset, size, *_ in headers:
        start = names_at + name_off
        name = cubin[start : cubin.index(b"\0", start)].decode()
        out[name] = b"" if kind == SHT_NOBITS else cubin[offset : offset + size]
    return out


def entry_functions(cubin):
    """Names of the kernel entry points (global FUNC symbols flagged STO_CUDA_ENTRY) of an ELF cubin."""
    headers = section_headers(cubin)
    names = []
    for sec in headers:
        if sec[1] != SHT_SYMTAB:
            continue
        strtab_off = headers[sec[6]][4]
        for j in range(sec[5] // 24):
            name, info, other, _, _, _ = struct.unpack_from("<IBBHQQ", cubin, sec[4] + j * 24)
            if info >> 4 == 1 and info & 15 == 2 and other & 0x10:
                end = cubin.index(b"\0", strtab_off + name)
                names.append(cubin[strtab_off + name:end].decode())
    return sorted(names)
