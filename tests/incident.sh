#!/usr/bin/env bash
# An incident, as an operator with a copy of a broker's log dir and two damaged segments lives it:
# overview, key search, time lookup, diagnosis, recovery, export of a dir without
# __consumer_offsets, Spark from one's own script, a segment written from minimal JSON.
# Usage: tests/incident.sh WORKDIR   (kafkacodec and python on the PATH: the project's venv)
set -euo pipefail
work=${1:?usage: incident.sh WORKDIR}
mkdir -p "$work" && cd "$work"
expect() { grep -q -- "$1" "$2" || { echo "incident: expected '$1' in $2:"; cat "$2"; exit 1; }; }
status() { set +e; "$@"; echo $? > status; set -e; }

kafkacodec sample logs > /dev/null
rm -r logs/__consumer_offsets-0                   # the usual investigation copy has none
python - <<'EOF'                                  # two damaged segments: a flipped byte, a torn tail
from pathlib import Path
for path, cut in (("logs/clicks-1/00000000000000000000.log", False), ("logs/payments-0/00000000000000000034.log", True)):
    p = Path(path)
    data = bytearray(p.read_bytes())
    if cut:
        data = data[:-7]
    else:
        data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
EOF

# 1. the overview: what is there, and what is damaged
status kafkacodec describe logs > describe.out 2> describe.err
[ "$(cat status)" = 1 ] || { echo "describe should exit 1 on damage"; exit 1; }
expect "clicks-1" describe.out
expect "kafkacodec recover logs/clicks-1" describe.err
expect "transaction from offset 63 is open" describe.err

# 2. where is user-3's data, and what was written at 12:28 UTC
kafkacodec find logs --key user-3 --topic clicks > find.out
expect "clicks-0 offset: 3 " find.out
kafkacodec offsets logs --time 2020-09-13T12:28:00Z > offsets.out
expect "clicks:0:" offsets.out
kafkacodec find logs --timestamp 2020-09-13T12:28:00Z --topic payments > at.out
expect "payments-0 offset: " at.out

# 3. diagnosis, then recovery that keeps every byte it cuts and says what it held
status kafkacodec verify logs > verify.out 2> verify.err
[ "$(cat status)" = 1 ] || { echo "verify should exit 1 on damage"; exit 1; }
expect "invalid from byte" verify.err
expect "to repair: \`kafkacodec recover logs\`" verify.err
kafkacodec recover logs > recover.out
expect "are kept in" recover.out
expect "records readable" recover.out
kafkacodec verify logs > /dev/null
ls logs/clicks-1/*.corrupt-* > /dev/null
kafkacodec dump logs/clicks-1/*.corrupt-* > kept.out 2> kept.err || true
expect "Bytes cut from 00000000000000000000.log at byte" kept.out

# 4. export without __consumer_offsets
kafkacodec export logs table > export.out
expect "clicks" export.out

# 5. Spark from one's own script
cat > job.py <<'EOF'
from pyspark.sql import SparkSession
from kafkacodec.pipeline import register
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
register(spark)
print("rows", spark.read.format("kafka-log").option("subscribe", "payments").load("logs").count())
spark.stop()
EOF
PYSPARK_PYTHON=$(command -v python) SPARK_LOCAL_IP=127.0.0.1 python job.py > job.out 2> job.err
expect "^rows " job.out

# 6. a segment written from minimal JSON
mkdir -p out
printf '%s\n' '{"records":[{"key":"dXNlci05","value":"aGk=","timestamp":1700000000000}]}' \
    '{"records":[{"value":"YnllIQ=="}]}' | kafkacodec write --index out/00000000000000000000.log > write.out
kafkacodec dump-log --files out/00000000000000000000.log --print-data-log > written.out
expect "| offset: 1 CreateTime: -1 keySize: -1 valueSize: 4 sequence: -1 headerKeys: \[\] payload: bye!" written.out
echo "incident replayed"
