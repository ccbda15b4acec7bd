meta:
  id: share_group_state
  title: __share_group_state records (share coordinator)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The records of the `__share_group_state` topic, where the share coordinator (KIP-932, share
  groups: queue-like consumption in Kafka 4.0 early access, 4.1 preview) keeps the state of each
  share-partition, that is of one topic partition as one share group consumes it: from which
  offset on records are still being delivered, and which of the offsets after it are acquired,
  acknowledged or archived. The key starts with an int16 record type, 0 a snapshot (the whole
  state) or 1 an update (a change to apply to the latest snapshot); the value starts with an int16
  version and is null (a tombstone) once the share-partition's state is deleted. Keys and values
  are coordinator records as `__consumer_offsets` holds them: keys in the classic encoding, values
  flexible, with a tagged-field section per struct. Drafted from Kafka 4.1.1's message specs by
  generator/kafka_spec.py; Kafka 4.2 adds a tagged field to both values, which stays raw here.
doc-ref: https://github.com/apache/kafka/tree/4.1.1/share-coordinator/src/main/resources/common/message
seq:
  - id: type
    type: s2
    doc: 'Record type: 0 ShareSnapshot, 1 ShareUpdate.'
  - id: key
    size-eos: true
    type:
      switch-on: type
      cases:
        0: share_snapshot_key
        1: share_update_key
    doc: The key of that record type; raw bytes for a type this schema does not know.
types:
  share_snapshot_key:
    doc: 'Key of a snapshot (record type 0): the share-partition it describes.'
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The share group.
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic.
      - id: partition
        type: s4
        doc: The partition.
  state_batch:
    doc: A range of offsets that share a delivery state and count.
    seq:
      - id: first_offset
        type: s8
        doc: First offset of the range.
      - id: last_offset
        type: s8
        doc: Last offset of the range (inclusive).
      - id: delivery_state
        type: s1
        doc: 'Delivery state: 0 available, 2 acknowledged, 4 archived.'
      - id: delivery_count
        type: s2
        doc: How many times the records of the range have been delivered.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_snapshot_value_body:
    doc: The whole state of a share-partition. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: snapshot_epoch
        type: s4
        doc: Epoch of this snapshot, one more than the previous snapshot's; updates name the snapshot they apply
          to by it.
      - id: state_epoch
        type: s4
        doc: Epoch of the state, bumped when the state is initialized again (as when the group's offsets are reset).
      - id: leader_epoch
        type: s4
        doc: Leader epoch of the partition leader that wrote the state.
      - id: start_offset
        type: s8
        doc: 'The share-partition start offset: records below it are done with.'
      - id: create_timestamp
        type: s8
        doc: When the state was first created (ms).
      - id: write_timestamp
        type: s8
        doc: When this snapshot was written (ms).
      - id: state_batches_count_plus_one
        type: uvarint
        -derive:
          count-of: state_batches
          plus: 1
        doc: Number of state batches plus one.
      - id: state_batches
        repeat: expr
        repeat-expr: state_batches_count_plus_one.value - 1
        type: state_batch
        doc: Delivery state of the offsets from the start offset on, by ranges.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; Kafka 4.1 defines none here, so all stay encoded (4.2 adds tag 0, the count of offsets
          from the start offset on whose delivery is complete).
  share_snapshot_value:
    doc: Value of a snapshot, prefixed by its version; null (a tombstone) deletes the state.
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_snapshot_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_update_key:
    doc: 'Key of an update (record type 1): the share-partition it changes.'
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The share group.
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic.
      - id: partition
        type: s4
        doc: The partition.
  share_update_value_body:
    doc: A change to a share-partition's state, applied over the latest snapshot. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: snapshot_epoch
        type: s4
        doc: Epoch of the snapshot this update applies to.
      - id: leader_epoch
        type: s4
        doc: Leader epoch of the partition leader that wrote the update.
      - id: start_offset
        type: s8
        doc: The new share-partition start offset, -1 when it does not change.
      - id: state_batches_count_plus_one
        type: uvarint
        -derive:
          count-of: state_batches
          plus: 1
        doc: Number of state batches plus one.
      - id: state_batches
        repeat: expr
        repeat-expr: state_batches_count_plus_one.value - 1
        type: state_batch
        doc: The ranges whose delivery state or count changed.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; Kafka 4.1 defines none here, so all stay encoded (4.2 adds tag 0, the count of offsets
          from the start offset on whose delivery is complete).
  share_update_value:
    doc: Value of an update, prefixed by its version; null (a tombstone) deletes it.
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_update_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
