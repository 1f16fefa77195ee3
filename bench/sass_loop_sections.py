#!/usr/bin/env python3
"""Session 41: a kernel's first loop (the chunk step of a scan) cut into sections at its wgmma
batches, with the instruction count of each, for one or more cubins side by side.

Usage: sass_loop_sections.py FUNC CUBIN [CUBIN ...]
       sass_loop_sections.py --census FUNC CUBIN [CUBIN ...]
  nvdisasm: $NVDISASM, else `nvdisasm` on PATH (on the CPU machine: `pip download --no-deps
  nvidia-cuda-nvdisasm`, unzip the wheel; nvidia/cu13/bin/nvdisasm runs without a GPU).
The loop is the span of the function's first backward branch; a section ends at every
WARPGROUP.ARRIVE / WARPGROUP.DEPBAR / BAR and at each batch's last HGMMA (gsb0).
--census (session 67): instead, the innermost loops that issue tensor-core instructions (HMMA /
HGMMA): those whose span overlaps no shorter such loop (a warp role's step, not the loops around
it; a role whose step branches back into itself shows as its shortest span), each with its
instruction count, its HMMA, HGMMA and LDSM, and its ten most frequent opcodes: how two forms'
steps differ in what they issue, without a GPU."""
import collections, os, re, subprocess, sys

INS = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*)')
LABEL = re.compile(r'^\.(L_x_\d+):')
BRANCH = re.compile(r'BRA\s+(?:!?U?P\d,\s*)?`\(\.(L_x_\d+)\)')


def function_sass(cubin, func):
    nvd = os.environ.get('NVDISASM', 'nvdisasm')
    text = subprocess.run([nvd, '-c', cubin], check=True, capture_output=True, text=True).stdout
    out, on = [], False
    for line in text.split('\n'):
        if re.match(r'^//-+ \.text\.', line):
            if on:
                break
            on = line.split()[1] == '.text.' + func
        if on:
            out.append(line)
    if not out:
        sys.exit(f'{func}: not in {cubin}')
    return out


def loops(lines):
    """(first line, last line) of each loop: every backward branch's span, in branch order."""
    labels = {m.group(1): i for i, l in enumerate(lines) if (m := LABEL.match(l.strip()))}
    for i, l in enumerate(lines):
        b = BRANCH.search(l)
        if b and labels.get(b.group(1), len(lines)) < i:
            yield labels[b.group(1)], i


def loop_sections(lines):
    start, end = next(loops(lines), (None, None))
    if start is None:
        sys.exit('no loop (backward branch) found')
    secs, name, n = [], 'loop top', 0
    for l in lines[start:end + 1]:
        m = INS.search(l)
        if not m:
            continue
        op = m.group(3)
        n += 1
        if op in ('WARPGROUP', 'BAR') or (op == 'HGMMA' and 'gsb0' in l):
            secs.append((name, n))
            n, name = 0, 'after ' + l.split('*/')[-1].strip().rstrip(' ;')[:44]
    secs.append((name, n))
    return secs


TENSOR = ('HMMA', 'HGMMA')


def loop_census(lines):
    """(first line, last line, opcode counts) of each tensor-core loop, as --census describes."""
    tensor = []
    for a, z in loops(lines):
        ops = collections.Counter(m.group(3) for x in lines[a:z + 1] if (m := INS.search(x)))
        if sum(ops[t] for t in TENSOR):
            tensor.append((a, z, ops))
    return [(a, z, ops) for a, z, ops in tensor if not any(a2 <= z and a <= z2 and z2 - a2 < z - a for a2, z2, _ in tensor)]


def print_census(func, cubin):
    print(f'{os.path.basename(cubin)} {func}')
    for a, z, ops in loop_census(function_sass(cubin, func)):
        top = ' '.join(f'{op} {n}' for op, n in ops.most_common(10))
        print(f'  lines {a}-{z}: {sum(ops.values())} instructions, HMMA {ops["HMMA"]}, HGMMA {ops["HGMMA"]}, '
              f'LDSM {ops["LDSM"]} | {top}')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == '--census':
        if len(sys.argv) < 4:
            sys.exit(__doc__)
        for c in sys.argv[3:]:
            print_census(sys.argv[2], c)
        return
    func, cubins = sys.argv[1], sys.argv[2:]
    cols = [loop_sections(function_sass(c, func)) for c in cubins]
    print(' | '.join(os.path.basename(c) for c in cubins))
    for row in zip(*cols):
        print(' '.join('%6d' % n for _, n in row), ' ', row[0][0])
    print(' '.join('%6d' % sum(n for _, n in col) for col in cols), '  loop total')


if __name__ == '__main__':
    main()
