# Sourced by the scripts that run on a GPU machine from a carried bundle
# (scripts/gpu-corpus.sh, scripts/gpu-scaling.sh): `. scripts/gpu-env.sh NAME` from the
# checkout's root sets `out` to OUT (default maxcode-out/NAME, made absolute), puts the
# bundle's build in place, says which bundle it is, and lets maxcode find its shared
# libraries (libgit2 and others the machine lacks are beside it) and its checkout.
out=${OUT:-maxcode-out/$1}
mkdir -p "$out" && out=$(cd "$out" && pwd)
if [ -d .gpu/build ] && [ ! -x build/maxcode ]; then cp -r .gpu/build build; fi
[ -f .gpu/STAMP ] && echo "bundle: $(cat .gpu/STAMP)"
[ -x build/maxcode ] || { echo "$1: build/maxcode missing: run scripts/gpu-bundle.sh on the build machine" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} MAXCODE_SOURCE_DIR=$PWD
