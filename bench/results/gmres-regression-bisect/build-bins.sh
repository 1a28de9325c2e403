set -e
mkdir -p /tmp/bisect-bins
for c in a1feeb1 4a9c427 471f115 f294993 395c1a7; do
  rm -rf /tmp/bisect-wt; git -C /work/main worktree add -f --detach /tmp/bisect-wt $c >/dev/null 2>&1
  (cd /tmp/bisect-wt && CARGO_TARGET_DIR=/tmp/bisect-target cargo build --release --bin pipekrylov --features "cuda opencl cli" 2>&1 | tail -1)
  cp /tmp/bisect-target/release/pipekrylov /tmp/bisect-bins/pipekrylov-$c
  strip --strip-debug /tmp/bisect-bins/pipekrylov-$c
  git -C /work/main worktree remove --force /tmp/bisect-wt
  echo "built $c $(date +%T)"
done
