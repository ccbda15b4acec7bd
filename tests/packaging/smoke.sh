#!/usr/bin/env bash
# Build a wheel with the compiled kernels and a pure one (KAFKACODEC_PURE=1), install each in a
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
    got=$("$work/$kind/bin/python" -c "from kafkacodec.runtime import kernels; print(kernels.compiled is not None)")
    want=$([ "$kind" = compiled ] && echo True || echo False)
    [ "$got" = "$want" ] || { echo "$kind wheel: compiled kernels loaded = $got, expected $want"; exit 1; }
    echo "$kind wheel ($(basename "$wheel")): installs, writes and verifies the sample"
done
