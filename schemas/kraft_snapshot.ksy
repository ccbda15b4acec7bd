meta:
  id: kraft_snapshot
  title: KRaft snapshot (<end offset>-<epoch>.checkpoint)
  license: Apache-2.0
  endian: be
  imports:
    - record_batch
doc: |
  A snapshot of a KRaft quorum's replicated state machine, kept in the `__cluster_metadata-0`
  directory beside the log's segments (Kafka 2.8 onwards, KIP-630). The file name gives the
  snapshot's id: the end offset as 20 digits, a dash, and the epoch as 10 digits, then
  `.checkpoint`. The end offset is exclusive: the snapshot holds the state that replaying every
  record below it gives, so the log is read from that offset on. A snapshot being written is
  named `….checkpoint.part` and one to be removed `….checkpoint.deleted`; neither is read. The
  `bootstrap.checkpoint` a controller's metadata directory holds at formatting has the same
  layout.

  The body is a sequence of v2 record batches, as a segment is, numbered from offset 0 and
  carrying the snapshot's epoch as their partition leader epoch. The first batch is a control
  batch holding one SnapshotHeader control record (its version and the time of the last record
  the snapshot covers); the last is a control batch holding one SnapshotFooter. Since Kafka 3.9 a
  snapshot at kraft.version 1 also carries a KRaftVersion and a KRaftVoters control record after
  the header. Between them, data batches hold the metadata records that rebuild the image:
  features first, then brokers, controllers, topics with their partitions, configs, quotas, ACLs,
  SCRAM credentials, delegation tokens and the producer-id block (`metadata_record`'s types).
doc-ref: https://github.com/apache/kafka/blob/trunk/raft/src/main/java/org/apache/kafka/snapshot/Snapshots.java
seq:
  - id: batches
    type: record_batch
    repeat: eos
    doc: |
      The header's control batch, the data batches, the footer's control batch. A snapshot
      whose last batch is not a footer was not finished and Kafka does not load it.
