#!/usr/bin/env bash
# Build a wheel with the compiled modules and a pure one (KAFKACODEC_PURE=1), install each in a
# fresh venv and run the sample through the command: make wheels.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for kind in compiled pure; do
    if [ "$kind" = pure ]; then export KAFKACODEC_PURE=1; else unset KAFKACODEC_PURE; fi
    python3 -m venv "$work/$kind"
    "$work/$kind/bin/pip" install -q --upgrade pip
    "$work/$kind/bin/pip" wheel -q --no-deps "$root" -w "$work/wheel-$kind"
    unset KAFKACODEC_PURE
    wheel=$(ls "$work/wheel-$kind"/*.whl)
    "$work/$kind/bin/pip" install -q "$wheel[columnar]"
    cd "$work"
    "$work/$kind/bin/kafkacodec" sample "$work/logs-$kind" >/dev/null
    "$work/$kind/bin/kafkacodec" verify "$work/logs-$kind" >/dev/null
    # the kernels, and the readers of the schemas' -hot types (record_batch and legacy_log_entry)
    got=$("$work/$kind/bin/python" -c "
from kafkacodec.generated import legacy_log_entry, record_batch
from kafkacodec.runtime import compiled, kernels
print(kernels.compiled is not None, len(compiled.compiled_types()))")
    want=$([ "$kind" = compiled ] && echo "True 7" || echo "False 0")
    [ "$got" = "$want" ] || { echo "$kind wheel: compiled kernels and readers = $got, expected $want"; exit 1; }
    echo "$kind wheel ($(basename "$wheel")): installs, writes and verifies the sample"
done
