# SPDX-License-Identifier: MIT
# plot.gp - draws `bpbench tiotest --plot OUT.png` (tools/bpbench/tiotest_plot.c).
#
# bpbench runs:  gnuplot -e "datafile='OUT.png.dat'; outfile='OUT.png';
#                policies='broadcast wake-all wake-one futex'; subtitle='...'" plot.gp
# and it can be re-run by hand the same way on a kept data file.
#
# Data file: one block per policy (gnuplot `index`, in the order of
# `policies`), one row per thread count.  Columns:
#   1      threads
#   2-5    CPU milliseconds per MB      (Write, Random Write, Read, Random Read)
#   6-9    fwait spurious wakeups per MB (same order)
#   10-13  context switches per MB       (same order)
#   14-17  MB per CPU-second             (same order)

if (!exists("datafile")) datafile = 'tiotest-plot.png.dat'
if (!exists("outfile")) outfile = 'tiotest-plot.png'
if (!exists("policies")) policies = 'broadcast wake-all wake-one futex'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo size 1400,1000 enhanced font ',11'
set output outfile

npol = words(policies)
set logscale x 2
set grid
set key top left
set xlabel 'threads'
set style data linespoints
set pointsize 1.3

# One colour and point type per policy, the same in every panel.
color(i) = word('#d62728 #ff7f0e #2ca02c #1f77b4 #9467bd #8c564b', i)

set multiplot layout 2,2 title "bpbench tiotest: cost of waiting per MB, by fwait policy\n{/*0.8 ".subtitle."}"

set title 'Random Read: CPU per MB (lower is better)'
set ylabel 'CPU ms per MB (usr+sys, whole process)'
set yrange [0:*]
plot for [i=1:npol] datafile index (i-1) using 1:5 lw 2 pt (i+4) lc rgb color(i) title word(policies, i)

set title 'Random Read: spurious wakeups per MB'
set ylabel 'fwait spurious wakeups per MB'
plot for [i=1:npol] datafile index (i-1) using 1:9 lw 2 pt (i+4) lc rgb color(i) title word(policies, i)

set title 'Sequential Read: CPU per MB (lower is better)'
set ylabel 'CPU ms per MB (usr+sys, whole process)'
plot for [i=1:npol] datafile index (i-1) using 1:4 lw 2 pt (i+4) lc rgb color(i) title word(policies, i)

set title 'Sequential Read: spurious wakeups per MB'
set ylabel 'fwait spurious wakeups per MB'
plot for [i=1:npol] datafile index (i-1) using 1:8 lw 2 pt (i+4) lc rgb color(i) title word(policies, i)

unset multiplot
set output
