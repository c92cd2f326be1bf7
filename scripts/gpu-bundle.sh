#!/usr/bin/env bash
# Builds what the GPU machine runs and gathers it in .gpu/ (ignored by git), small
# enough to travel: maxcode without debug info, the injection libraries, the shared
# libraries Ubuntu 24.04 lacks (docs/architecture.md), the GPU test programs
# (tests/gpu/) and the profiler's CUDA example. scripts/gpu-check.sh runs it all there.
# Never carries libc, libstdc++, libssl or libcrypto: Ubuntu's are newer and compatible.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-profile.sh build
# The GPU tests, and the sandbox's own tests: the GPU machines lack bubblewrap, so
# isolation there is the namespace sandbox, which must be seen to hold on them too; and
# the limits' (cgroup_test, evaluator_test's limit tests): their cgroup layout (pure v2
# in a container) is not this machine's (hybrid v1/v2).
gpu_tests="$(cd tests/gpu && ls *_test.cc | sed 's/\.cc$//') process_test cgroup_test evaluator_test"
cmake --build build --target $gpu_tests
rm -rf .gpu && mkdir -p .gpu/build/lib .gpu/build/tests .gpu/examples/cuda-multistream/build
strip --strip-debug -o .gpu/build/maxcode build/maxcode
for t in $gpu_tests; do strip --strip-debug -o ".gpu/build/tests/$t" "build/tests/$t"; done
cp build/lib/libmaxcode_sampler.so build/lib/libmaxcode_cupti.so build/lib/libmaxcode_shim.so .gpu/build/lib/
for lib in libgit2.so.1.5 libcpp-httplib.so.0.11 libmbedtls.so.14 libmbedx509.so.1 libmbedcrypto.so.7 \
           libhttp_parser.so.2.9 libssh2.so.1 libbrotlicommon.so.1 libbrotlidec.so.1 libbrotlienc.so.1 \
           libdw.so.1 libelf.so.1 libsqlite3.so.0 libexpat.so.1 \
           libpq.so.5 libldap-2.5.so.0 liblber-2.5.so.0 libsasl2.so.2 libgssapi_krb5.so.2 libkrb5.so.3 \
           libk5crypto.so.3 libkrb5support.so.0 libcom_err.so.2 libkeyutils.so.1; do
  cp -L "/lib/x86_64-linux-gnu/$lib" .gpu/build/lib/
done
cp examples/cuda-multistream/build/multistream .gpu/examples/cuda-multistream/build/
# What was bundled, printed by gpu-check.sh first: a bundle left from an earlier build
# (this script stops before replacing .gpu when the build fails) is then seen as such.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!.gpu' || echo '+changes') built $(date -u +%FT%TZ)" > .gpu/STAMP
cat .gpu/STAMP
du -sh .gpu
