// kafkajs as an independent writer of v2 record batches: its own protocol encoders
// (kafkajs/src/protocol/recordBatch), as its producer frames them before sending.
// stdin: JSON {"codec": 0 or 1 (none, gzip), "batches": [[{"offset", "timestamp", "key", "value",
// "headers": [[key, value], ...]}, ...], ...]} with keys and values in base64 (null for null);
// stdout: the batches, end to end.
const Long = require('kafkajs/src/utils/long')
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0')
const Record = require('kafkajs/src/protocol/recordBatch/record/v0')

const bytes = text => (text === null ? null : Buffer.from(text, 'base64'))

async function main () {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  const request = JSON.parse(Buffer.concat(chunks).toString())
  const out = []
  for (const batch of request.batches) {
    const first = batch[0]
    const records = batch.map(r => Record({
      offsetDelta: r.offset - first.offset,
      timestampDelta: r.timestamp - first.timestamp,
      key: bytes(r.key),
      value: bytes(r.value),
      headers: Object.fromEntries(r.headers.map(([k, v]) => [k, bytes(v)]))
    }))
    const encoded = await RecordBatch({
      compression: request.codec,
      firstOffset: Long.fromValue(first.offset),
      firstTimestamp: first.timestamp,
      maxTimestamp: Math.max(...batch.map(r => r.timestamp)),
      lastOffsetDelta: batch[batch.length - 1].offset - first.offset,
      records
    })
    out.push(encoded.buffer)
  }
  process.stdout.write(Buffer.concat(out))
}

main().catch(e => { console.error(e); process.exit(1) })
