"""Builds dnnplan's bundled cubins and writes kernels/manifest.toml (called by build-cubins.sh).

Input: the hand-written fields of each [[kernel]] in manifest.toml (name, source, defines, and the
optional ptxas: code-generation options of that module's ptxas, each of PTXAS_OPTIONS).
Output: kernels/<arch>/<name>.cubin and every generated manifest field (sources with headers as
nvcc -M reports them, flags, toolkit, blake3 of the sources and of the cubin, exported functions
read from the cubin's ELF symbol table). With --check, builds into a temporary directory and fails
unless the cubins and the manifest are byte-identical to the checked-in ones.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

import blake3

from cubin_elf import entry_functions

ARCH = "sm_90a"
SCHEMA = 1
# Deterministic flags only: no -lineinfo, no -G (they embed paths and change the bytes).
COMMON_FLAGS = ["-gencode=arch=compute_90a,code=sm_90a", "--cubin", "-O3", "-std=c++17", "-Iinclude"]
# ptxas options a module may ask for in its manifest's `ptxas`: only ones that change register
# allocation and scheduling, never the arithmetic (the numerics are the source's alone).
PTXAS_OPTIONS = ("--register-usage-level=",)
HEADER = """\
# kernels/manifest.toml: dnnplan's bundled CUDA kernels (one module per [[kernel]]).
# Hand-written fields: name, source, defines, ptxas (optional). kernels/build-cubins.sh writes
# every other field; run it after any change under kernels/src or kernels/include. Format:
# kernels/README.md.
"""


def sources_digest(root, sources):
    """blake3 over every source: relative path, NUL, bytes, NUL, in the listed (sorted) order."""
    h = blake3.blake3()
    for rel in sources:
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()


def toolkit_version(nvcc):
    out = subprocess.run([nvcc, "--version"], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "release" in line and ", V" in line:
            return line.rsplit(", V", 1)[1].strip()
    raise SystemExit(f"cannot read the toolkit version from `{nvcc} --version`")


def header_deps(nvcc, root, source, flags):
    out = subprocess.run([nvcc, "-M", *flags, source], cwd=root, check=True, capture_output=True, text=True).stdout
    deps = set()
    rule = out.replace("\\\n", " ")
    prerequisites = rule.split(":", 1)[1] if ":" in rule else ""
    for tok in prerequisites.split():
        path = os.path.normpath(os.path.join(root, tok))
        if path.startswith(root + os.sep):
            deps.add(os.path.relpath(path, root))
    return deps


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_list(items):
    return "[" + ", ".join(toml_str(i) for i in items) + "]"


def build(nvcc, root, out_dir):
    with open(os.path.join(root, "manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    toolkit = toolkit_version(nvcc)
    os.makedirs(os.path.join(out_dir, ARCH), exist_ok=True)
    text = [HEADER, f"schema = {SCHEMA}\n"]
    seen = set()
    for k in manifest.get("kernel", []):
        name, source = k["name"], k["source"]
        if name in seen or not name.replace("_", "").isalnum():
            raise SystemExit(f"kernel `{name}`: names must be unique identifiers")
        seen.add(name)
        defines = list(k.get("defines", []))
        ptxas = list(k.get("ptxas", []))
        for opt in ptxas:
            if not opt.startswith(PTXAS_OPTIONS):
                raise SystemExit(f"kernel `{name}`: ptxas option `{opt}` is not one of {PTXAS_OPTIONS}")
        flags = COMMON_FLAGS + [f"-D{d}" for d in defines] + [f for opt in ptxas for f in ("-Xptxas", opt)]
        sources = sorted(header_deps(nvcc, root, source, flags) | {source})
        cubin_rel = f"{ARCH}/{name}.cubin"
        cubin_path = os.path.join(out_dir, cubin_rel)
        subprocess.run([nvcc, *flags, "-o", cubin_path, source], cwd=root, check=True)
        with open(cubin_path, "rb") as f:
            cubin = f.read()
        functions = entry_functions(cubin)
        if not functions:
            raise SystemExit(f"kernel `{name}`: {source} exports no extern \"C\" __global__ function")
        text.append(
            "\n[[kernel]]\n"
            f"name = {toml_str(name)}\n"
            f"source = {toml_str(source)}\n"
            f"defines = {toml_list(defines)}\n"
            + (f"ptxas = {toml_list(ptxas)}\n" if ptxas else "")
            + f"arch = {toml_str(ARCH)}\n"
            f"sources = {toml_list(sources)}\n"
            f"nvcc_flags = {toml_list(flags)}\n"
            f"toolkit = {toml_str(toolkit)}\n"
            f"sources_blake3 = {toml_str(sources_digest(root, sources))}\n"
            f"cubin = {toml_str(cubin_rel)}\n"
            f"cubin_blake3 = {toml_str(blake3.blake3(cubin).hexdigest())}\n"
            f"cubin_bytes = {len(cubin)}\n"
            f"functions = {toml_list(functions)}\n"
        )
    with open(os.path.join(out_dir, "manifest.toml"), "w") as f:
        f.write("".join(text))
    return sorted(seen)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="dnnplan-cubins-") as tmp:
        names = build(args.nvcc, root, tmp)
        produced = ["manifest.toml"] + [f"{ARCH}/{n}.cubin" for n in names]
        if args.check:
            bad = []
            for rel in produced:
                mine = os.path.join(root, rel)
                with open(os.path.join(tmp, rel), "rb") as f:
                    fresh = f.read()
                if not os.path.exists(mine) or open(mine, "rb").read() != fresh:
                    bad.append(rel)
            stale = sorted(set(os.listdir(os.path.join(root, ARCH))) - {f"{n}.cubin" for n in names})
            bad += [f"{ARCH}/{s} (not in the manifest)" for s in stale]
            if bad:
                print("build-cubins --check: not byte-identical to a fresh build: " + ", ".join(bad), file=sys.stderr)
                return 1
            print(f"build-cubins --check: {len(names)} kernel(s) byte-identical")
            return 0
        for rel in produced:
            os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
            shutil.copyfile(os.path.join(tmp, rel), os.path.join(root, rel))
        for stale in set(os.listdir(os.path.join(root, ARCH))) - {f"{n}.cubin" for n in names}:
            os.remove(os.path.join(root, ARCH, stale))
        print(f"build-cubins: wrote {len(names)} kernel(s) and manifest.toml")
        return 0


if __name__ == "__main__":
    sys.exit(main())
