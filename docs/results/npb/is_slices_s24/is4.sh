#!/bin/bash
T=/tmp/npb_s23/build/target
for r in 1 2 3; do
 for n in 4 2; do
  echo "round $r copies $n serial: $(/tmp/gx/run4.sh $n $T/npb-rust-B/release/is)"
  echo "round $r copies $n asat: $(/tmp/gx/run4.sh $n ASAT_POLICY=asat $T/npb-asat-B/release/is)"
  echo "round $r copies $n asat-noslice: $(/tmp/gx/run4.sh $n ASAT_POLICY=asat ASAT_SOLO_SLICE=off $T/npb-asat-B/release/is)"
  echo "round $r copies $n single: $(/tmp/gx/run4.sh $n ASAT_POLICY=single $T/npb-asat-B/release/is)"
 done
done
