#!/bin/bash
# run4.sh N BIN ENV... : N copies at once; max and mean wall s, verified count
n=$1; shift
for i in $(seq $n); do ( /usr/bin/time -f "%e" -o /tmp/gx/t.$i env "$@" > /tmp/gx/o.$i 2>&1 ) & done
wait
python3 - $n <<'P'
import sys
n=int(sys.argv[1]); t=[float(open(f"/tmp/gx/t.{i}").read().split()[-1]) for i in range(1,n+1)]
ok=sum("SUCCESSFUL" in open(f"/tmp/gx/o.{i}").read() for i in range(1,n+1))
print(f"max {max(t):.2f} mean {sum(t)/n:.2f} verified {ok}/{n}")
P
