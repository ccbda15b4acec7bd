"""kafkacodec: Apache Kafka's on-disk formats as generated Python readers and writers.

    from kafkacodec import read_batches, write_batches
    for batch in read_batches(segment_bytes):
        for record in batch:
            print(record.offset, record.timestamp, record.key, record.value, record.headers)

The codecs themselves live in `kafkacodec.generated`; this package only re-exports the facade,
imported lazily so that the schema compiler runs even while generated code is being rebuilt.
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["read_batches", "write_batch", "write_batches", "Record", "Batch", "Header"]


def __getattr__(name: str):
    if name in __all__:
        from kafkacodec.codec import records
        return getattr(records, name)
    raise AttributeError(f"module 'kafkacodec' has no attribute {name!r}")
