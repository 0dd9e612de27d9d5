# Summarizes runs of `iter_overhead-* --bench none` (a file each) into BENCHMARKS.md's iterator table.
#   python3 scripts/iter_overhead_summary.py 'DIR/run*.txt'
import glob, re, statistics as st, sys
rows = {}
order = []
files = sorted(glob.glob(sys.argv[1] if len(sys.argv) > 1 else '/tmp/io24/run*.txt'), key=lambda f: int(re.findall(r'\d+', f)[-1]))
for f in files:
    lines = open(f).read().splitlines()
    try:
        i = next(k for k, l in enumerate(lines) if l.startswith('iter_overhead summary'))
    except StopIteration:
        continue
    for l in lines[i+2:]:
        p = l.split()
        if len(p) < 9 or p[0] not in ('quiet', '1_hog'):
            continue
        key = (p[0], p[1])
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append([float(x) for x in p[2:9]])
names = {'tiny_axpy_16': 'axpy, 16 elements', 'tiny_axpy_64': 'axpy, 64 elements',
         'tiny_dot_64': 'dot, 64 elements', 'large_axpy_1M': 'axpy, 1M elements',
         'large_dot_1M': 'dot, 1M elements'}
n = len(files)
print(f"runs: {n}")
print("| load | row | native | iter | iter_install | rayon_main | iter/native: median (range) | runs over 1.1x | rayon_main/iter |")
print("|---|---|---|---|---|---|---|---|---|")
for key in order:
    v = rows[key]
    med = lambda j: st.median(r[j] for r in v)
    ratios = [r[4] for r in v]
    over = sum(x > 1.1 for x in ratios)
    load = 'quiet' if key[0] == 'quiet' else '1 hog'
    print(f"| {load} | {names.get(key[1], key[1])} | {med(0):.2f} | {med(1):.2f} | {med(2):.2f} | {med(3):.2f} | "
          f"{st.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}) | {over} of {len(v)} | {med(6):.1f} |")
