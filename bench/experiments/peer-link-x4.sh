#!/usr/bin/env bash
# The four-GPU runs of bench/log/2026-11-27-four-h100-halo-link.md ("Four H100s ... a device-to-device halo link"): the
# distributed tests with 4 ranks, then link against host-staged exchanges with 4 ranks on 3D
# 256^3 (strong) and 3D 33.6M (weak, 8.4M per rank) and with 2 ranks on 3D 256^3.
#   OUT=... bash bench/experiments/peer-link-x4.sh
NP=4 POINTS="4:poisson3d:16777216 4:poisson3d:33554432 2:poisson3d:16777216" \
  exec bash "$(dirname "$0")/peer-link-ab.sh"
