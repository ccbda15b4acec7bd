meta:
  id: control_record
  title: Kafka control records (transaction markers, KRaft control records)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The key of a record in a control batch (attributes bit 5), and the values Kafka writes there.
  Kafka 0.11 (KIP-98) introduced control batches for the ABORT and COMMIT markers that end
  transactions; KRaft (Kafka 2.8 early access, 3.0 and later) added leader changes, snapshot
  headers and footers, and, since 3.8, the KRaft version and voter set. The key is 4 bytes, a
  version and a type; the KRaft values are flexible-version messages written at version 0.
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java
seq:
  - id: version
    type: s2
    valid:
      min: 0
    -default: 0
    doc: Key version, 0; Kafka rejects a negative one and reads a larger one as version 0.
  - id: type
    type: s2
    enum: control_type
    doc: What the record's value holds.
enums:
  control_type:
    0:
      id: abort
      doc: Ends a transaction whose records are to be skipped by read-committed consumers.
    1:
      id: commit
      doc: Ends a transaction whose records are visible.
    2:
      id: leader_change
      doc: |
        A KRaft leader was elected (3.0 and later). In 2.7 and 2.8, id 2 was QUORUM_REASSIGNMENT
        and id 3 LEADER_CHANGE.
    3:
      id: snapshot_header
      doc: First record of a KRaft snapshot (3.0 and later).
    4:
      id: snapshot_footer
      doc: Last record of a KRaft snapshot (3.0 and later).
    5:
      id: kraft_version
      doc: The KRaft protocol version in use (3.8 and later).
    6:
      id: kraft_voters
      doc: The KRaft voter set (3.8 and later).
types:
  end_transaction_marker:
    doc: Value of ABORT and COMMIT records (6 bytes).
    seq:
      - id: version
        type: s2
        valid:
          min: 0
        -default: 0
        doc: Value version, 0; Kafka reads larger versions as 0 and ignores bytes after the epoch.
      - id: coordinator_epoch
        type: s4
        doc: Epoch of the transaction coordinator that wrote the marker.
  leader_change_message:
    doc: Value of LEADER_CHANGE records, LeaderChangeMessage version 0.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: The message's version field, 0.
      - id: leader_id
        type: s4
        doc: The elected leader.
      - id: voters_count_plus_one
        type: uvarint
        -derive:
          count-of: voters
          plus: 1
        doc: Number of voters plus one.
      - id: voters
        type: voter
        repeat: expr
        repeat-expr: voters_count_plus_one.value - 1
        doc: The voters of the quorum.
      - id: granting_voters_count_plus_one
        type: uvarint
        -derive:
          count-of: granting_voters
          plus: 1
        doc: Number of granting voters plus one.
      - id: granting_voters
        type: voter
        repeat: expr
        repeat-expr: granting_voters_count_plus_one.value - 1
        doc: The voters that voted for the leader.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  voter:
    doc: A voter of LeaderChangeMessage version 0.
    seq:
      - id: voter_id
        type: s4
        doc: The voter's replica id.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  snapshot_header_record:
    doc: Value of SNAPSHOT_HEADER records, version 0.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: The message's version field, 0.
      - id: last_contained_log_timestamp
        type: s8
        doc: Append time of the last record the snapshot covers.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  snapshot_footer_record:
    doc: Value of SNAPSHOT_FOOTER records, version 0.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: The message's version field, 0.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  kraft_version_record:
    doc: Value of KRAFT_VERSION records, version 0.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: The message's version field, 0.
      - id: kraft_version
        type: s2
        -json:
          name: kRaftVersion
        doc: The KRaft protocol version.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  voters_record:
    doc: Value of KRAFT_VOTERS records, VotersRecord version 0.
    seq:
      - id: version
        type: s2
        -default: 0
        doc: The message's version field, 0.
      - id: voters_count_plus_one
        type: uvarint
        -derive:
          count-of: voters
          plus: 1
        doc: Number of voters plus one.
      - id: voters
        type: voter_entry
        repeat: expr
        repeat-expr: voters_count_plus_one.value - 1
        doc: The voter set.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  voter_entry:
    doc: One voter of VotersRecord.
    seq:
      - id: voter_id
        type: s4
        doc: The voter's replica id.
      - id: voter_directory_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the voter's log directory (most significant 8 bytes first).
      - id: endpoints_count_plus_one
        type: uvarint
        -derive:
          count-of: endpoints
          plus: 1
        doc: Number of endpoints plus one.
      - id: endpoints
        type: endpoint
        repeat: expr
        repeat-expr: endpoints_count_plus_one.value - 1
        doc: The voter's listeners.
      - id: kraft_version_feature
        type: kraft_version_feature
        -json:
          name: kRaftVersionFeature
        doc: The KRaft versions the voter supports.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  endpoint:
    doc: A listener of a voter.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Listener name.
      - id: host
        type: kafka_types::compact_string
        doc: Host name.
      - id: port
        type: u2
        doc: Port.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
  kraft_version_feature:
    doc: The range of KRaft versions a voter supports.
    seq:
      - id: min_supported_version
        type: s2
        doc: Lowest supported version.
      - id: max_supported_version
        type: s2
        doc: Highest supported version.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields.
