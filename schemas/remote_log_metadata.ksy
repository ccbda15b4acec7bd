meta:
  id: remote_log_metadata
  title: Tiered storage metadata records (__remote_log_metadata)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The records of the `__remote_log_metadata` topic, where the default remote log metadata
  manager of tiered storage (KIP-405, production-ready since Kafka 3.9) keeps what each broker
  copied to or deleted from remote storage: one record when a segment's copy starts, more as its
  state moves on, and records for a partition being deleted. Records have no key; the value is
  framed as KRaft frames its metadata records: an unsigned varint frame version (1), an unsigned
  varint api key naming the record type and an unsigned varint version, then the record in
  Kafka's flexible encoding (compact strings and arrays, a tagged-field section per struct). A
  record must fill its value: bytes after it are an error to Kafka. Record types and versions this
  schema does not know are kept as raw bytes. Drafted from Kafka 4.1.1's message specs by
  generator/kafka_spec.py; 4.2 changes none of them.
doc-ref: https://github.com/apache/kafka/tree/4.1.1/storage/src/main/resources/message
seq:
  - id: frame_version
    type: uvarint
    doc: Version of the record framing, an unsigned varint; always 1.
  - id: api_key
    type: uvarint
    doc: 'Record type: 0 RemoteLogSegmentMetadataRecord, 1 RemoteLogSegmentMetadataUpdateRecord, 2 RemotePartitionDeleteMetadataRecord,
      3 RemoteLogSegmentMetadataSnapshotRecord.'
  - id: version
    type: uvarint
    doc: Version of that record type; with the api key it selects the layout of the body.
  - id: body
    size-eos: true
    type:
      switch-on: 'version.value < 1000 ? api_key.value * 1000 + version.value : -1'
      cases:
        0: remote_log_segment_metadata_record(version.value)
        1000: remote_log_segment_metadata_update_record(version.value)
        2000: remote_partition_delete_metadata_record(version.value)
        3000: remote_log_segment_metadata_snapshot_record(version.value)
    -require-eos: true
    doc: The record of that type and version; raw bytes for a type or version this schema does not know.
types:
  topic_id_partition_entry:
    doc: A topic partition, by name and by topic id.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Topic name.
      - id: id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic.
      - id: partition
        type: s4
        doc: The partition.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remote_log_segment_id_entry:
    doc: 'A segment in remote storage: its partition and the UUID given to the copy.'
    seq:
      - id: topic_id_partition
        type: topic_id_partition_entry
        doc: The partition the segment belongs to.
      - id: id
        size: 16
        -json:
          as: uuid
        doc: UUID of the remote segment, new for every copy of a local segment.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  segment_leader_epoch_entry:
    doc: A leader epoch and the first offset written in it, within the segment.
    seq:
      - id: leader_epoch
        type: s4
        doc: The leader epoch.
      - id: offset
        type: s8
        doc: First offset of the segment written in that epoch.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remote_log_segment_metadata_record_tag:
    doc: 'One tagged field, decoded by its tag: 0 says whether the segment''s transaction index is empty; other
      tags stay raw.'
    seq:
      - id: tag
        type: uvarint
        doc: Tag number of the field.
      - id: data_length
        type: uvarint
        -derive:
          length-of: data
        doc: Size of the field's data in bytes.
      - id: data
        size: data_length.value
        type:
          switch-on: tag.value
          cases:
            0: kafka_types::tagged_bool
        doc: 'The field''s data: tag 0 decodes as a boolean, true when the segment has no aborted transactions to
          look up; other tags stay raw bytes.'
  remote_log_segment_metadata_record_tags:
    doc: 'Tagged fields: tag 0 says whether the segment''s transaction index is empty; others stay raw.'
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: remote_log_segment_metadata_record_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  remote_log_segment_metadata_record:
    doc: |-
      A segment whose copy to remote storage starts (api key 0), with what is known of it then.
      Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: remote_log_segment_id
        type: remote_log_segment_id_entry
        doc: The remote segment.
      - id: start_offset
        type: s8
        doc: First offset of the segment.
      - id: end_offset
        type: s8
        doc: Last offset of the segment (inclusive).
      - id: broker_id
        type: s4
        doc: The broker that wrote the record (the partition's leader).
      - id: max_timestamp_ms
        type: s8
        doc: Largest record timestamp in the segment (ms).
      - id: event_timestamp_ms
        type: s8
        doc: When the record was written (ms).
      - id: segment_leader_epochs_count_plus_one
        type: uvarint
        -derive:
          count-of: segment_leader_epochs
          plus: 1
        doc: Number of leader epochs plus one.
      - id: segment_leader_epochs
        repeat: expr
        repeat-expr: segment_leader_epochs_count_plus_one.value - 1
        type: segment_leader_epoch_entry
        doc: Leader epochs of the segment's records, each with the offset it starts at.
      - id: segment_size_in_bytes
        type: s4
        doc: Size of the segment file in bytes.
      - id: custom_metadata
        type: kafka_types::compact_nullable_bytes
        doc: Metadata the remote storage plugin returned when it copied the segment (KIP-917), or null.
      - id: remote_log_segment_state
        type: s1
        doc: 'State of the segment''s copy or deletion: 0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED, 2 DELETE_SEGMENT_STARTED,
          3 DELETE_SEGMENT_FINISHED. COPY_SEGMENT_STARTED when the record is first written.'
      - id: tagged_fields
        type: remote_log_segment_metadata_record_tags
        -tagged:
          - id: txn_index_empty
            tag: 0
            default: 0
            after: remote_log_segment_state
            json:
              as: bool
        doc: 'Tagged fields: tag 0 says whether the segment''s transaction index is empty (false when absent); others
          stay raw.'
  remote_log_segment_metadata_update_record:
    doc: 'A new state of a remote segment (api key 1): its copy finished, or its deletion started or finished. Version
      0 only.'
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: remote_log_segment_id
        type: remote_log_segment_id_entry
        doc: The remote segment.
      - id: broker_id
        type: s4
        doc: The broker that wrote the record.
      - id: event_timestamp_ms
        type: s8
        doc: When the record was written (ms).
      - id: custom_metadata
        type: kafka_types::compact_nullable_bytes
        doc: Metadata the remote storage plugin returned when it copied the segment (KIP-917), or null.
      - id: remote_log_segment_state
        type: s1
        doc: 'State of the segment''s copy or deletion: 0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED, 2 DELETE_SEGMENT_STARTED,
          3 DELETE_SEGMENT_FINISHED.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remote_partition_delete_metadata_record:
    doc: A step of deleting a partition's remote data (api key 2), as when its topic is deleted. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topic_id_partition
        type: topic_id_partition_entry
        doc: The partition.
      - id: broker_id
        type: s4
        doc: 'The broker that wrote the record: the controller marks the deletion, the leader of the metadata topic''s
          partition starts and finishes it.'
      - id: event_timestamp_ms
        type: s8
        doc: When the record was written (ms).
      - id: remote_partition_delete_state
        type: s1
        doc: 'Deletion state: 0 DELETE_PARTITION_MARKED, 1 DELETE_PARTITION_STARTED, 2 DELETE_PARTITION_FINISHED.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remote_log_segment_metadata_snapshot_record_tag:
    doc: 'One tagged field, decoded by its tag: 0 says whether the segment''s transaction index is empty; other
      tags stay raw.'
    seq:
      - id: tag
        type: uvarint
        doc: Tag number of the field.
      - id: data_length
        type: uvarint
        -derive:
          length-of: data
        doc: Size of the field's data in bytes.
      - id: data
        size: data_length.value
        type:
          switch-on: tag.value
          cases:
            0: kafka_types::tagged_bool
        doc: 'The field''s data: tag 0 decodes as a boolean, true when the segment has no aborted transactions to
          look up; other tags stay raw bytes.'
  remote_log_segment_metadata_snapshot_record_tags:
    doc: 'Tagged fields: tag 0 says whether the segment''s transaction index is empty; others stay raw.'
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: remote_log_segment_metadata_snapshot_record_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  remote_log_segment_metadata_snapshot_record:
    doc: |-
      A remote segment's metadata as the metadata manager's snapshots of a partition held it (api
      key 3), without the partition; Kafka 4.1 still reads it but no longer writes it. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: segment_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the remote segment.
      - id: start_offset
        type: s8
        doc: First offset of the segment.
      - id: end_offset
        type: s8
        doc: Last offset of the segment (inclusive).
      - id: broker_id
        type: s4
        doc: The broker that wrote or last updated the metadata.
      - id: max_timestamp_ms
        type: s8
        doc: Largest record timestamp in the segment (ms).
      - id: event_timestamp_ms
        type: s8
        doc: When the metadata was last written (ms).
      - id: segment_leader_epochs_count_plus_one
        type: uvarint
        -derive:
          count-of: segment_leader_epochs
          plus: 1
        doc: Number of leader epochs plus one.
      - id: segment_leader_epochs
        repeat: expr
        repeat-expr: segment_leader_epochs_count_plus_one.value - 1
        type: segment_leader_epoch_entry
        doc: Leader epochs of the segment's records, each with the offset it starts at.
      - id: segment_size_in_bytes
        type: s4
        doc: Size of the segment file in bytes.
      - id: custom_metadata
        type: kafka_types::compact_nullable_bytes
        doc: Metadata the remote storage plugin returned when it copied the segment (KIP-917), or null.
      - id: remote_log_segment_state
        type: s1
        doc: 'State of the segment''s copy or deletion: 0 COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED, 2 DELETE_SEGMENT_STARTED,
          3 DELETE_SEGMENT_FINISHED.'
      - id: tagged_fields
        type: remote_log_segment_metadata_snapshot_record_tags
        -tagged:
          - id: txn_index_empty
            tag: 0
            default: 0
            after: remote_log_segment_state
            json:
              as: bool
        doc: 'Tagged fields: tag 0 says whether the segment''s transaction index is empty (false when absent); others
          stay raw.'
