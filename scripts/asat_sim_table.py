# Summarizes asat_sim's CSVs (the `--out` folders given) into the table of
# docs/results/asat_sim/table.md: per machine size, jobs and scenario, the ranges over seeds.
#   python3 scripts/asat_sim_table.py DIR...
# `never`: no evaluation after which the sum of teams stayed in [P, P + k] (or no regain);
# `-`: the scenario has no departure to regain from (or, for the hogs' CPU, has no hogs).
# hogs' CPU: what the hogs got until the last job left, a share of a CPU each, beside asat's
# jobs and beside fixed teams. share/fixed: fixed teams of the jobs' equal shares of the CPUs
# the hogs leave (makespan_share, a static partition) over fixed teams of P; asat/share: the
# rule over that partition. fixed/ideal and asat/ideal: the makespans over the shortest a
# runtime could reach without more threads than the CPUs the hogs leave (makespan_ideal).
import collections
import csv
import sys

rows = []
for d in sys.argv[1:]:
    with open(d + '/asat_sim.csv') as f:
        rows += list(csv.DictReader(f))
groups = collections.defaultdict(list)
for r in rows:
    groups[(int(r['processors']), int(r['jobs']), r['scenario'])].append(r)


def span(vals, fmt):
    """min-max of the non-empty values, and how many were empty ('never')."""
    v = [float(x) for x in vals if x != '']
    if not v:
        return 'never'
    never = len(vals) - len(v)
    s = fmt(min(v)) if min(v) == max(v) else f"{fmt(min(v))}-{fmt(max(v))}"
    return s + (f" ({never} never)" if never else "")


print("|P|k|scenario|seeds|settle|max dev|moves/eval|regain|makespan/fixed|share/fixed|asat/share|fixed/ideal|asat/ideal|hogs' CPU: asat; fixed|")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(groups):
    rs = groups[key]
    over = lambda col, base: [str(float(r[col]) / float(r[base]))
                              if r.get(col) and r.get(base) else '' for r in rs]
    over_ideal = lambda col: over(col, 'makespan_ideal')
    regain = [r['regain_evals'] for r in rs]
    hogs = [r.get('hog_share', '') for r in rs]
    hogs_fixed = [r.get('hog_share_fixed', '') for r in rs]
    pct = lambda x: f'{100 * x:.0f}%'
    cells = [
        span([r['settle_evals'] for r in rs], lambda x: str(int(x))),
        span([r['max_share_dev'] for r in rs], pct),
        span([r['moves_per_eval_after'] for r in rs], lambda x: f'{x:.2f}'),
        span(regain, lambda x: str(int(x))) if any(regain) else '-',
        span(over('makespan', 'makespan_fixed'), lambda x: f'{x:.2f}'),
        span(over('makespan_share', 'makespan_fixed'), lambda x: f'{x:.2f}'),
        span(over('makespan', 'makespan_share'), lambda x: f'{x:.2f}'),
        span(over_ideal('makespan_fixed'), lambda x: f'{x:.2f}'),
        span(over_ideal('makespan'), lambda x: f'{x:.2f}'),
        f"{span(hogs, pct)}; {span(hogs_fixed, pct)}" if any(hogs) else '-',
    ]
    print(f"|{key[0]}|{key[1]}|{key[2]}|{len(rs)}|" + "|".join(cells) + "|")
