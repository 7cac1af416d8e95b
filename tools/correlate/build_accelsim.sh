#!/bin/bash
# Build Accel-Sim (trace-driven GPGPU-Sim 4.x), the reference simulator of docs/correlation.md,
# into a scratch folder, following /work/shared/accelsim/RECIPE.md §1-3.
#
#   tools/correlate/build_accelsim.sh [--peer DIR] [--framework-src GITDIR] [--gpgpusim-src GITDIR]
#
# --peer DIR           where everything goes (default: $ACCELSIM_PEER, else /work/peer). Outside the repo.
# --framework-src, --gpgpusim-src
#                      git repositories to clone from (default: the public GitHub ones,
#                      https://github.com/accel-sim/accel-sim-framework and .../gpgpu-sim_distribution;
#                      a local mirror works too, e.g. one made by a `fetch`).
#
# Reuses an existing build: if $PEER/accel-sim-framework/gpu-simulator/bin/release/accel-sim.out
# exists, it only prints its path. Pinned commits: accel-sim-framework 73f9fac, gpgpu-sim_distribution
# 667834cf (the ones the reference figures in docs/correlation.md were made with).
# Needs: gcc/g++ (12.2 used), make, bison, flex, makedepend (xutils-dev), zlib headers, python3 + pip
# (for the CUDA 11.8 runtime headers/libraries: a fake nvcc is written, no GPU or CUDA install needed).
set -euo pipefail

PEER="${ACCELSIM_PEER:-/work/peer}"
FW_SRC="https://github.com/accel-sim/accel-sim-framework"
GS_SRC="https://github.com/accel-sim/gpgpu-sim_distribution"
FW_COMMIT=73f9fac
GS_COMMIT=667834cf
while [ $# -gt 0 ]; do
  case "$1" in
    --peer) PEER="$2"; shift 2 ;;
    --peer=*) PEER="${1#*=}"; shift ;;
    --framework-src) FW_SRC="$2"; shift 2 ;;
    --gpgpusim-src) GS_SRC="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

BIN="$PEER/accel-sim-framework/gpu-simulator/bin/release/accel-sim.out"
if [ -x "$BIN" ]; then
  echo "$BIN (existing build reused)"
  exit 0
fi

for tool in gcc g++ make bison flex makedepend python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y bison flex xutils-dev build-essential)" >&2; exit 1; }
done

mkdir -p "$PEER"
cd "$PEER"
# 1. Sources
[ -d accel-sim-framework/.git ] || git clone -q "$FW_SRC" accel-sim-framework
[ -d gpgpu-sim_distribution/.git ] || git clone -q "$GS_SRC" gpgpu-sim_distribution
git -C accel-sim-framework checkout -q "$FW_COMMIT"
git -C gpgpu-sim_distribution checkout -q "$GS_COMMIT"
mkdir -p accel-sim-framework/gpu-simulator/extern/pybind11   # stops setup_environment.sh cloning pybind11

# 2. A fake CUDA 11.8: the runtime headers and libcudart from pip, an nvcc that only prints its version
if [ ! -x cudaroot/bin/nvcc ]; then
  python3 -m pip install -q --target "$PEER/cuda" nvidia-cuda-runtime-cu11 nvidia-cuda-nvcc-cu11 nvidia-cuda-profiler-api-cu11
  mkdir -p cudaroot/bin cudaroot/include cudaroot/lib64
  cp -rn cuda/nvidia/cuda_runtime/include/* cuda/nvidia/cuda_nvcc/include/* cuda/nvidia/cuda_profiler_api/include/* cudaroot/include/
  cp -rn cuda/nvidia/cuda_runtime/lib/* cudaroot/lib64/
  cat > cudaroot/bin/nvcc <<'EOF'
#!/bin/sh
echo "nvcc: NVIDIA (R) Cuda compiler driver"
echo "Cuda compilation tools, release 11.8, V11.8.89"
EOF
  chmod +x cudaroot/bin/nvcc
fi

# 3. Build (niced: the machine is shared)
export CUDA_INSTALL_PATH="$PEER/cudaroot" PATH="$PEER/cudaroot/bin:$PATH"
set +u
cd "$PEER/gpgpu-sim_distribution" && source setup_environment release && nice -n 10 make -j2
cd "$PEER/accel-sim-framework/gpu-simulator" && source ./setup_environment.sh && nice -n 10 make -j2
set -u
[ -x "$BIN" ] || { echo "build finished but $BIN is missing" >&2; exit 1; }
echo "$BIN"
