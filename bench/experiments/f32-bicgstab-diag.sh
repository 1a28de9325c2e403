for tol in 1e-3 1e-4; do for v in pipelined classical; do for be in cuda opencl host; do
  bash .device/run pipekrylov solve --generate convdiff3d:4096 --solver bicgstab --variant $v --precision f32 --tol $tol --backend $be --json 2>/dev/null \
  | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(sys.argv[1], sys.argv[2], d["backend"], d["iterations"], d["stop_reason"], "%.2e"%d["relative_residual"], "repl", d["residual_replacements"])' $tol $v
done; done; done
