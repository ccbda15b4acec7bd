meta:
  id: consumer_offsets
  title: __consumer_offsets records (group coordinator)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
    - group_records
doc: |
  The records of the `__consumer_offsets` topic, where the group coordinator keeps committed
  offsets (since Kafka 0.9) and group metadata. The key starts with a version that names the
  record type: 0 and 1 an offset commit, 2 a group's metadata, 3 and above the records of the
  consumer group protocol (KIP-848: 3 group metadata, 4 partition metadata, 5 member metadata,
  6 target assignment metadata, 7 target assignment member, 8 current member assignment), and
  10 and above those Kafka 4 adds for share groups (KIP-932), consumer groups' regular
  expressions (KIP-848) and streams groups (KIP-1071), whose keys and values `group_records`
  describes. The value starts with its own version; a null value is a tombstone that deletes
  what the key names. Writers pick the value version from the inter-broker protocol version:
  offset commits are written at version 3 (1 when they carry an expiry) and group metadata at 3
  since Kafka 2.3.
doc-ref: https://github.com/apache/kafka/blob/trunk/group-coordinator/src/main/resources/common/message/OffsetCommitValue.json
seq:
  - id: version
    type: s2
    doc: Key version, which names the record type.
  - id: key
    size-eos: true
    type:
      switch-on: version
      cases:
        0: offset_commit_key
        1: offset_commit_key
        2: group_metadata_key
        3: consumer_group_metadata_key
        4: consumer_group_partition_metadata_key
        5: consumer_group_member_metadata_key
        6: consumer_group_target_assignment_metadata_key
        7: consumer_group_target_assignment_member_key
        8: consumer_group_current_member_assignment_key
        10: group_records::share_group_member_metadata_key
        11: group_records::share_group_metadata_key
        12: group_records::share_group_target_assignment_metadata_key
        13: group_records::share_group_target_assignment_member_key
        14: group_records::share_group_current_member_assignment_key
        15: group_records::share_group_state_partition_metadata_key
        16: group_records::consumer_group_regular_expression_key
        17: group_records::streams_group_metadata_key
        19: group_records::streams_group_member_metadata_key
        20: group_records::streams_group_target_assignment_metadata_key
        21: group_records::streams_group_target_assignment_member_key
        22: group_records::streams_group_current_member_assignment_key
        23: group_records::streams_group_topology_key
    doc: |
      The key of that record type; raw bytes for the types this schema does not know: 9 (the
      partition metadata of Kafka 4.0's early-access share groups, gone in 4.1), 18 (never in a
      release) and any above 23.
types:
  offset_commit_key:
    doc: Key of an offset commit (key versions 0 and 1; writers use 1).
    seq:
      - id: group
        type: kafka_types::string
        doc: The consumer group.
      - id: topic
        type: kafka_types::string
        doc: The topic.
      - id: partition
        type: s4
        doc: The partition.
  offset_commit_value_body_tag:
    doc: One tagged field, decoded by its tag; other tags stay raw.
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
            0: kafka_types::tagged_uuid
        doc: The field's data, decoded by its tag; other tags stay raw bytes.
  offset_commit_value_body_tags:
    doc: The tagged fields.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: offset_commit_value_body_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  offset_commit_value_body:
    doc: 'Version 4 (3.5, KIP-915): version 3 as a flexible version; readers must accept it, writers do not emit
      it yet.'
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: offset
        type: s8
        doc: The committed offset.
      - id: leader_epoch
        type: s4
        if: version >= 3
        doc: Leader epoch of the last consumed record, -1 if unknown.
      - id: metadata
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: Metadata the committer attached.
      - id: commit_timestamp
        type: s8
        doc: When the offset was committed (ms).
      - id: expire_timestamp
        type: s8
        if: version == 1
        doc: When the commit expires (ms), -1 for the group's default.
      - id: tagged_fields
        type: offset_commit_value_body_tags
        -tagged:
          - id: topic_id
            tag: 0
            default: !!binary |
              AAAAAAAAAAAAAAAAAAAAAA==
            after: expire_timestamp
            json:
              as: uuid
            if: version >= 4
        if: version >= 4
        doc: Tagged fields.
  offset_commit_value:
    doc: Value of an offset commit, prefixed by its version; null (a tombstone) deletes the commit.
    seq:
      - id: version
        type: s2
        doc: Value version, 0 to 4.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: offset_commit_value_body(version)
            1: offset_commit_value_body(version)
            2: offset_commit_value_body(version)
            3: offset_commit_value_body(version)
            4: offset_commit_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  group_metadata_key:
    doc: Key of a group's metadata (key version 2).
    seq:
      - id: group
        type: kafka_types::string
        doc: The group.
  member_metadata:
    doc: A member, group metadata version 4 (flexible).
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: member_id
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: The member id the coordinator gave.
      - id: group_instance_id
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_nullable_string
            _: kafka_types::nullable_string
        if: version >= 3
        doc: Static membership id (KIP-345), or null.
      - id: client_id
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: The member's client.id.
      - id: client_host
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: The member's host as the coordinator saw it.
      - id: rebalance_timeout
        type: s4
        if: version >= 1
        doc: Rebalance timeout in milliseconds.
      - id: session_timeout
        type: s4
        doc: Session timeout in milliseconds.
      - id: subscription
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_bytes
            _: kafka_types::bytes
        doc: The protocol's subscription (a ConsumerProtocolSubscription for consumer groups).
      - id: assignment
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_bytes
            _: kafka_types::bytes
        doc: The member's assignment (a ConsumerProtocolAssignment for consumer groups).
      - id: tagged_fields
        type: kafka_types::tagged_fields
        if: version >= 4
        doc: Tagged fields.
  group_metadata_value_body:
    doc: 'Version 4 (3.5, KIP-915): version 3 as a flexible version, with tagged fields in the group and in each
      member.'
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: protocol_type
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: The group's protocol type, "consumer" for consumer groups; empty for groups that only commit offsets.
      - id: generation
        type: s4
        doc: Generation of the group.
      - id: protocol
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_nullable_string
            _: kafka_types::nullable_string
        doc: The chosen protocol (assignor), or null.
      - id: leader
        type:
          switch-on: version >= 4
          cases:
            'true': kafka_types::compact_nullable_string
            _: kafka_types::nullable_string
        doc: Member id of the leader, or null.
      - id: current_state_timestamp
        type: s8
        if: version >= 2
        doc: When the group last changed state, -1 if unknown.
      - id: members_count
        type: s4
        -derive:
          count-of: members
        if: version < 4
        doc: Number of members.
      - id: members_count_plus_one
        type: uvarint
        -derive:
          count-of: members
          plus: 1
        if: version >= 4
        doc: Number of members plus one.
      - id: members
        repeat: expr
        repeat-expr: 'version >= 4 ? members_count_plus_one.value - 1 : members_count'
        type: member_metadata(version)
        doc: The members.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        if: version >= 4
        doc: Tagged fields.
  group_metadata_value:
    doc: Value of a group's metadata, prefixed by its version; null (a tombstone) deletes the group.
    seq:
      - id: version
        type: s2
        doc: Value version, 0 to 4.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: group_metadata_value_body(version)
            1: group_metadata_value_body(version)
            2: group_metadata_value_body(version)
            3: group_metadata_value_body(version)
            4: group_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  consumer_group_metadata_key:
    doc: Key of a consumer group's epoch and metadata (key version 3).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  consumer_group_metadata_value_body_tag:
    doc: One tagged field, decoded by its tag; other tags stay raw.
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
            0: kafka_types::tagged_int64
        doc: The field's data, decoded by its tag; other tags stay raw bytes.
  consumer_group_metadata_value_body_tags:
    doc: The tagged fields.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: consumer_group_metadata_value_body_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  consumer_group_metadata_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: epoch
        type: s4
        doc: The group epoch.
      - id: tagged_fields
        type: consumer_group_metadata_value_body_tags
        -tagged:
          - id: metadata_hash
            tag: 0
            default: 0
            after: epoch
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_metadata_value:
    doc: 'Value of key version 3: the group''s epoch (KIP-848, Kafka 3.7 and later).'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_metadata_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
  consumer_group_partition_metadata_key:
    doc: Key of a consumer group's subscribed topics' metadata (key version 4).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  partition_metadata:
    doc: The racks a partition's replicas are on.
    seq:
      - id: partition
        type: s4
        doc: The partition.
      - id: racks_count_plus_one
        type: uvarint
        -derive:
          count-of: racks
          plus: 1
        doc: Number of racks plus one.
      - id: racks
        repeat: expr
        repeat-expr: racks_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: The racks.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  topic_metadata:
    doc: A subscribed topic.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: The topic id.
      - id: topic_name
        type: kafka_types::compact_string
        doc: The topic name.
      - id: num_partitions
        type: s4
        doc: Its number of partitions.
      - id: partition_metadata_count_plus_one
        type: uvarint
        -derive:
          count-of: partition_metadata
          plus: 1
        doc: Number of partition metadata plus one.
      - id: partition_metadata
        repeat: expr
        repeat-expr: partition_metadata_count_plus_one.value - 1
        type: partition_metadata
        doc: Racks per partition (unused since Kafka 4.0).
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_partition_metadata_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topics_count_plus_one
        type: uvarint
        -derive:
          count-of: topics
          plus: 1
        doc: Number of topics plus one.
      - id: topics
        repeat: expr
        repeat-expr: topics_count_plus_one.value - 1
        type: topic_metadata
        doc: The subscribed topics.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_partition_metadata_value:
    doc: 'Value of key version 4: metadata of the subscribed topics.'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_partition_metadata_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
  consumer_group_member_metadata_key:
    doc: Key of a consumer group member's subscription (key version 5).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  consumer_group_member_metadata_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: instance_id
        type: kafka_types::compact_nullable_string
        doc: Static membership instance id, or null.
      - id: rack_id
        type: kafka_types::compact_nullable_string
        doc: The member's rack, or null.
      - id: client_id
        type: kafka_types::compact_string
        doc: The client id.
      - id: client_host
        type: kafka_types::compact_string
        doc: The client host.
      - id: subscribed_topic_names_count_plus_one
        type: uvarint
        -derive:
          count-of: subscribed_topic_names
          plus: 1
        doc: Number of subscribed topic names plus one.
      - id: subscribed_topic_names
        repeat: expr
        repeat-expr: subscribed_topic_names_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: The subscribed topic names.
      - id: subscribed_topic_regex
        type: kafka_types::compact_nullable_string
        doc: The subscribed regular expression, or null.
      - id: rebalance_timeout_ms
        type: s4
        doc: The rebalance timeout, -1 if unknown.
      - id: server_assignor
        type: kafka_types::compact_nullable_string
        doc: The server-side assignor, or null.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: 'Tagged fields: tag 0 holds the classic protocol''s member metadata of a member that joined with it
          (3.8 and later).'
  consumer_group_member_metadata_value:
    doc: 'Value of key version 5: a member''s subscription and client.'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_member_metadata_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
  consumer_group_target_assignment_metadata_key:
    doc: Key of a consumer group's target assignment epoch (key version 6).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  consumer_group_target_assignment_metadata_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: assignment_epoch
        type: s4
        doc: The assignment epoch.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_target_assignment_metadata_value:
    doc: 'Value of key version 6: the epoch of the target assignment.'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_target_assignment_metadata_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
  consumer_group_target_assignment_member_key:
    doc: Key of a member's target assignment (key version 7).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  topic_partition:
    doc: Partitions of one topic, by topic id.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: The topic id.
      - id: partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: partitions
          plus: 1
        doc: Number of partitions plus one.
      - id: partitions
        repeat: expr
        repeat-expr: partitions_count_plus_one.value - 1
        type: s4
        doc: The partitions.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_target_assignment_member_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topic_partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: topic_partitions
          plus: 1
        doc: Number of topic partitions plus one.
      - id: topic_partitions
        repeat: expr
        repeat-expr: topic_partitions_count_plus_one.value - 1
        type: topic_partition
        doc: The assigned partitions by topic.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_target_assignment_member_value:
    doc: 'Value of key version 7: a member''s target assignment.'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_target_assignment_member_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
  consumer_group_current_member_assignment_key:
    doc: Key of a member's current assignment (key version 8).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  topic_partitions:
    doc: Partitions of one topic, by topic id.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: The topic id.
      - id: partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: partitions
          plus: 1
        doc: Number of partitions plus one.
      - id: partitions
        repeat: expr
        repeat-expr: partitions_count_plus_one.value - 1
        type: s4
        doc: The partitions.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_current_member_assignment_value_body:
    doc: Version 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: member_epoch
        type: s4
        doc: The member epoch expected in its next heartbeat.
      - id: previous_member_epoch
        type: s4
        doc: The epoch before the last bump, accepted if that bump was lost.
      - id: state
        type: s1
        doc: The member state.
      - id: assigned_partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: assigned_partitions
          plus: 1
        doc: Number of assigned partitions plus one.
      - id: assigned_partitions
        repeat: expr
        repeat-expr: assigned_partitions_count_plus_one.value - 1
        type: topic_partitions
        doc: The partitions assigned to (or owned by) the member.
      - id: partitions_pending_revocation_count_plus_one
        type: uvarint
        -derive:
          count-of: partitions_pending_revocation
          plus: 1
        doc: Number of partitions pending revocation plus one.
      - id: partitions_pending_revocation
        repeat: expr
        repeat-expr: partitions_pending_revocation_count_plus_one.value - 1
        type: topic_partitions
        doc: The partitions the member must revoke.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones added by later Kafka versions stay encoded here.
  consumer_group_current_member_assignment_value:
    doc: 'Value of key version 8: a member''s current assignment.'
    seq:
      - id: version
        type: s2
        doc: Value version, 0.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_current_member_assignment_value_body(version)
        doc: The fields of version 0; raw bytes for a version this schema does not know.
