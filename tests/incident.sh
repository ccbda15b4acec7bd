#!/usr/bin/env bash
# An incident, as an operator with a copy of a broker's log dir and two damaged segments lives it:
# overview, key search, time lookup, diagnosis, recovery, salvage of what follows the damage,
# export of a dir without __consumer_offsets, Spark from one's own script, a segment written
# from minimal JSON, and a KRaft controller's metadata log: the cluster at a time, a history.
# Each command is run as the README and docs/recipes/ give it.
# Usage: tests/incident.sh WORKDIR   (kafkacodec and python on the PATH: the project's venv)
set -euo pipefail
work=${1:?usage: incident.sh WORKDIR}
mkdir -p "$work" && cd "$work"
expect() { grep -q -- "$1" "$2" || { echo "incident: expected '$1' in $2:"; cat "$2"; exit 1; }; }
status() { set +e; "$@"; echo $? > status; set -e; }
# verify after recovery: nothing wrong but the offsets the damage took (clicks 45..49, payments 62),
# where verify tells offset gaps
only_lost_offsets() {
    local lost='(offsets? (45\.\.49|62|62\.\.62)\b).*(missing|not in the log)'
    if grep -v -E -e "$lost" -e "^(to repair|note)" "$1" | grep -q .; then
        echo "incident: verify found more than the offsets lost:"; cat "$1"; exit 1
    fi
    if [ "$(cat status)" != 0 ] && ! { [ "$(cat status)" = 1 ] && grep -q -E "$lost" "$1"; }; then
        echo "incident: verify exited $(cat status) for:"; cat "$1"; exit 1
    fi
}

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
status kafkacodec verify logs > /dev/null 2> recovered.err
only_lost_offsets recovered.err
ls logs/clicks-1/*.corrupt-* > /dev/null
kafkacodec dump logs/clicks-1/*.corrupt-* > kept.out 2> kept.err || true
expect "Bytes cut from 00000000000000000000.log at byte" kept.out

# 3b. salvage (docs/recipes/salvage.md): what the kept bytes still hold, put back as a segment
status kafkacodec dump --skip-corrupt logs/clicks-1/*.corrupt-* > salvageable.out 2> salvageable.err
[ "$(cat status)" = 1 ] || { echo "dump of the kept bytes should exit 1 on their damage"; exit 1; }
expect "invalid from byte 0" salvageable.err
status kafkacodec dump --json --skip-corrupt logs/clicks-1/*.corrupt-* > salvageable.jsonl 2> salvageable-json.err
[ "$(cat status)" = 1 ] || { echo "dump --json of the kept bytes should exit 1 on their damage"; exit 1; }
# every batch whose framing holds is listed: the damaged one marked, then the 10 intact ones
[ "$(wc -l < salvageable.jsonl)" = 11 ] || { echo "expected 11 batches:"; cat salvageable.jsonl; exit 1; }
[ "$(grep -c '"crcValid":false' salvageable.jsonl)" = 1 ] || { echo "expected one damaged batch"; exit 1; }
kafkacodec recover --salvage --dry-run logs > salvage-plan.out
expect "would salvage offsets 50\.\.99 (10 batches, 50 records) as logs/clicks-1/00000000000000000050.log" \
    salvage-plan.out
[ ! -e logs/clicks-1/00000000000000000050.log ] || { echo "--dry-run wrote the segment"; exit 1; }
kafkacodec recover --salvage logs > salvage.out
expect "salvaged offsets 50\.\.99 (10 batches, 50 records) into logs/clicks-1/00000000000000000050.log" salvage.out
expect "offsets 45\.\.49 are not in the log" salvage.out
status kafkacodec verify logs > /dev/null 2> salvaged.err
only_lost_offsets salvaged.err
kafkacodec find logs --offset 77 --topic clicks --partitions 1 > salvaged-find.out
expect "clicks-1 offset: 77 " salvaged-find.out
kafkacodec recover --salvage logs > salvage-again.out
expect "logs: nothing to recover or salvage" salvage-again.out

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

# 7. a KRaft controller's metadata log: the cluster now, at a time, and a partition's history
kafkacodec sample --kraft-controller kraft > /dev/null
kafkacodec metadata kraft > cluster.out
expect "orders" cluster.out
expect "payments" cluster.out
kafkacodec metadata kraft --at-time 2023-11-15T01:30:00Z --json > at.json
python - <<'EOF'                                  # orders-1's ISR at 01:30, between two of its changes
import json
orders = next(t for t in json.load(open("at.json"))["topics"] if t["name"] == "orders")
one = next(p for p in orders["partitions"] if p["partition"] == 1)
assert one["isr"] == [3, 1], one
EOF
kafkacodec metadata kraft --history orders-1 > history.out
expect "^ *30 .*2023-11-15T01:24:20.000Z.*PARTITION_CHANGE_RECORD" history.out
expect "^ *41 .*2023-11-15T01:43:20.000Z.*PARTITION_CHANGE_RECORD" history.out
echo "incident replayed"
