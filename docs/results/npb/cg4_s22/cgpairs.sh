#!/bin/bash
# 4 copies of serial CG A as two pairs, one pair after the other; 4 at once alongside
T=/tmp/npb_s22/build/target
B=$T/npb-rust-A/release/cg
for round in 1 2 3; do
  s=$(date +%s.%N)
  for i in 1 2; do $B > /tmp/p.$i.out 2>&1 & done; wait
  m=$(date +%s.%N)
  for i in 3 4; do $B > /tmp/p.$i.out 2>&1 & done; wait
  e=$(date +%s.%N)
  ok=$(grep -l SUCCESSFUL /tmp/p.*.out | wc -l)
  echo "pairs: first pair $(echo "$m - $s" | bc) s, all $(echo "$e - $s" | bc) s, verified $ok/4"
  echo "4 at once: $(/tmp/run4.sh $B)"
done
