#!/bin/bash
# run4.sh BIN ENV... : 4 copies at once, print wall time until the last finished and total CPU
bin=$1; shift
start=$(date +%s.%N)
for i in 1 2 3 4; do env "$@" $bin > /tmp/run4.$i.out 2>&1 & done
wait
end=$(date +%s.%N)
ok=$(grep -l "SUCCESSFUL" /tmp/run4.*.out | wc -l)
echo "$(echo "$end - $start" | bc) s, verified $ok/4"
