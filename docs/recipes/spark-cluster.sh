#!/usr/bin/env bash
# The README's recipe for a cluster (in its Spark section), the commands as written: a kafkacodec
# job on a YARN, Kubernetes or standalone cluster, in client mode.
#
#   docs/recipes/spark-cluster.sh MASTER LOGDIR OUT [spark-submit options...]
#
# MASTER: yarn, k8s://https://HOST:PORT or spark://HOST:PORT. LOGDIR and OUT must be paths every
# node sees the same (a shared mount, or s3://... for LOGDIR). Run it with the venv that has
# "kafkacodec[spark]" activated, in the directory to work in: deps.tar.gz and deps/ are written
# there. PY: the Python every node has, at the same path (default /usr/bin/python3.X, X the
# venv's minor version). The job is spark-cluster-job.py, beside this script.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '5p' "$0" >&2; exit 2; }
master=$1 logdir=$2 out=$3
shift 3
job=$(cd "$(dirname "$0")" && pwd)/spark-cluster-job.py
PY=${PY:-/usr/bin/python$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')}

kafkacodec pack-env --force deps.tar.gz --python "$PY"
rm -rf deps && mkdir deps && tar -xzf deps.tar.gz -C deps
spark-submit --master "$master" --deploy-mode client \
    --archives deps.tar.gz#deps --conf spark.executorEnv.PYTHONPATH=./deps \
    --conf spark.pyspark.python="$PY" --conf spark.pyspark.driver.python="$(command -v python)" \
    --conf spark.sql.python.filterPushdown.enabled=true "$@" "$job" "$logdir" "$out"
