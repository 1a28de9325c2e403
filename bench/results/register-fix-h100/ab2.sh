# Tests of the new build, then GMRES(30) A/B (b63bd25 against the new build): resident ladders
# (two rounds) and 3D 4.1M sync, same card.
for t in cuda_nvrtc device_resident backend_agreement; do
  timeout 300 bash .device/run test-$t --include-ignored > $OUT/t.log 2>&1; echo "$t: status $?"
  grep -E "test result|FAILED|panicked" $OUT/t.log | head -5; cat $OUT/t.log >> $OUT/tests.log
done; rm -f $OUT/t.log
for r in 1 2; do for b in .bisect/pipekrylov-b63bd25 .device/bin/pipekrylov; do for p in poisson2d poisson3d; do
  t=$(basename $b | sed 's/pipekrylov-//; s/^pipekrylov$/new/')-$p-r$r
  timeout 100 $b bench --backends cuda --solvers gmres --executions resident --problem $p --min-n 3000 --max-n 70000 --iterations 300 --repeats 10 --out $OUT/s-$t.csv --quiet >/dev/null 2>&1 || echo "fail $t"
done; done; done
for b in .bisect/pipekrylov-b63bd25 .device/bin/pipekrylov; do t=$(basename $b | sed 's/pipekrylov-//; s/^pipekrylov$/new/')
  timeout 100 $b bench --backends cuda --solvers gmres --problem poisson3d:4096000 --repeats 5 --out $OUT/l-$t-poisson3d-4096000-r1.csv --quiet >/dev/null 2>&1 || echo "fail large $t"; done
cd $OUT; python3 - <<'PY'
import csv,glob,collections,statistics
d=collections.defaultdict(list)
for f in glob.glob('[sl]-*.csv'):
  b,p,*_=f[2:-4].split('-')
  for r in csv.DictReader(open(f)):
    d[(r['problem'],int(r['n']),b)].append(float(r['median_s_per_iter'])*1e6)
print('problem n | b63bd25 new (median of rounds, us)')
for k in sorted({(k[0],k[1]) for k in d}):
  print(*k, '|', *[('%.2f'%statistics.median(d[k+(b,)])) if d.get(k+(b,)) else '-' for b in ('b63bd25','new')])
PY
tar czf ab2.tgz *.csv tests.log; rm -f *.csv tests.log
