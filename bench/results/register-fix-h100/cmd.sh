for t in "backend_agreement dcgs2" "device_resident gmres"; do set -- $t; timeout 150 bash .device/run test-$1 $2 --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | sed "s/^/$1: /"; done
for r in 1 2; do for b in .bisect/pipekrylov-f294993 .bisect/pipekrylov-395c1a7 .device/bin/pipekrylov; do for p in poisson3d:4096000 poisson3d:8388608 poisson2d:16777216; do t=$(basename $b)-$(echo $p | tr ':' '-')-r$r; timeout 60 $b bench --backends cuda --solvers gmres --problem $p --repeats 5 --out $OUT/l-$t.csv --quiet >/dev/null 2>&1 || echo "fail $t"; done; done; done
for b in .bisect/pipekrylov-f294993 .bisect/pipekrylov-395c1a7 .device/bin/pipekrylov; do t=$(basename $b); timeout 100 $b bench --backends cuda --solvers gmres --executions resident --problem poisson2d --max-n 70000 --iterations 300 --repeats 10 --out $OUT/s-$t.csv --quiet >/dev/null 2>&1 || echo "fail small $t"; done
cd $OUT; python3 -c "
import csv,glob
for f in sorted(glob.glob('*.csv')):
  for r in csv.DictReader(open(f)): print(f[:-4], r['n'], round(float(r['median_s_per_iter'])*1e6,2), r['launches_per_iter'], r['floor_ratio'])
"; tar czf gmres-fix.tgz *.csv; rm *.csv
