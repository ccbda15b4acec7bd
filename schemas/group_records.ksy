meta:
  id: group_records
  title: Share, streams and regular-expression records of __consumer_offsets (Kafka 4)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The `__consumer_offsets` records that Kafka 4 adds (key versions 10 to 23), which
  `consumer_offsets` reads through its key switch: the share groups of KIP-932 (early access in
  4.0, preview in 4.1; types 10 to 15), the regular expressions of the consumer group protocol
  (KIP-848; type 16) and the streams groups of KIP-1071 (4.1; types 17 and 19 to 23). As with the
  consumer group protocol's records, a group's state is split into records a tombstone can delete
  one by one: the group's epoch, each member's metadata, the target assignment and each member's
  current assignment. Keys are in the classic encoding (after the int16 record type that
  `consumer_offsets` reads); each value starts with an int16 version and is a flexible message,
  with a tagged-field section per struct. Drafted from Kafka 4.1.1's message specs by
  generator/kafka_spec.py; Kafka 4.2 adds tagged fields to two streams group values (the group's
  validated topology epoch and last assignment configs, each active task's assignment epochs),
  which stay raw here.
doc-ref: https://github.com/apache/kafka/tree/4.1.1/group-coordinator/src/main/resources/common/message
types:
  share_group_member_metadata_key:
    doc: Key of a share group member's metadata (type 10).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  share_group_member_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: rack_id
        type: kafka_types::compact_nullable_string
        doc: The member's rack, or null.
      - id: client_id
        type: kafka_types::compact_string
        doc: The client id.
      - id: client_host
        type: kafka_types::compact_string
        doc: The client's host as the coordinator saw it.
      - id: subscribed_topic_names_count_plus_one
        type: uvarint
        -derive:
          count-of: subscribed_topic_names
          plus: 1
        doc: Number of topic names plus one.
      - id: subscribed_topic_names
        repeat: expr
        repeat-expr: subscribed_topic_names_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: The topics the member subscribes to.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_member_metadata_value:
    doc: 'Value of type 10: a share group member''s client and subscription. Prefixed by its version; null (a tombstone)
      deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_member_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_group_metadata_key:
    doc: Key of a share group's metadata (type 11).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  share_group_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: epoch
        type: s4
        doc: The group epoch, bumped when the group's members or subscriptions change.
      - id: metadata_hash
        type: s8
        doc: Hash of the metadata of the topics the group subscribes to; a change means the assignment must be computed
          again.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_metadata_value:
    doc: 'Value of type 11: the share group''s epoch. Prefixed by its version; null (a tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_group_target_assignment_metadata_key:
    doc: Key of a share group's target assignment metadata (type 12).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  share_group_target_assignment_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: assignment_epoch
        type: s4
        doc: The group epoch the target assignment was computed for.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_target_assignment_metadata_value:
    doc: 'Value of type 12: the epoch of the share group''s target assignment. Prefixed by its version; null (a
      tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_target_assignment_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_group_target_assignment_member_key:
    doc: Key of a share group member's target assignment (type 13).
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
        doc: UUID of the topic.
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
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_target_assignment_member_value_body:
    doc: The value's fields, of version 0, the only one.
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
        doc: Number of topics plus one.
      - id: topic_partitions
        repeat: expr
        repeat-expr: topic_partitions_count_plus_one.value - 1
        type: topic_partition
        doc: The assigned partitions, by topic.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_target_assignment_member_value:
    doc: 'Value of type 13: the partitions the assignor gives the member. Prefixed by its version; null (a tombstone)
      deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_target_assignment_member_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_group_current_member_assignment_key:
    doc: Key of a share group member's current assignment (type 14).
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
        doc: UUID of the topic.
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
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_current_member_assignment_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: member_epoch
        type: s4
        doc: The member epoch the coordinator expects in the member's next heartbeat.
      - id: previous_member_epoch
        type: s4
        doc: The epoch before the last bump, still accepted in case the member never learned of the bump.
      - id: state
        type: s1
        doc: 'The member state: 0 stable, 1 unrevoked partitions, 2 unreleased partitions, 127 unknown.'
      - id: assigned_partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: assigned_partitions
          plus: 1
        doc: Number of topics plus one.
      - id: assigned_partitions
        repeat: expr
        repeat-expr: assigned_partitions_count_plus_one.value - 1
        type: topic_partitions
        doc: The partitions assigned to the member, by topic.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_current_member_assignment_value:
    doc: 'Value of type 14: the member''s epoch and the partitions it has now. Prefixed by its version; null (a
      tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_current_member_assignment_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  share_group_state_partition_metadata_key:
    doc: Key of a share group's state partition metadata (type 15).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  topic_partitions_info:
    doc: A topic and some of its partitions.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic.
      - id: topic_name
        type: kafka_types::compact_string
        doc: The topic name.
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
        doc: Tagged fields; ones this version does not define stay encoded here.
  topic_info:
    doc: A topic.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic.
      - id: topic_name
        type: kafka_types::compact_string
        doc: The topic name.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_state_partition_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: initializing_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: initializing_topics
          plus: 1
        doc: Number of topics plus one.
      - id: initializing_topics
        repeat: expr
        repeat-expr: initializing_topics_count_plus_one.value - 1
        type: topic_partitions_info
        doc: Topics and partitions whose share state is being initialized.
      - id: initialized_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: initialized_topics
          plus: 1
        doc: Number of topics plus one.
      - id: initialized_topics
        repeat: expr
        repeat-expr: initialized_topics_count_plus_one.value - 1
        type: topic_partitions_info
        doc: Topics and partitions whose share state is initialized.
      - id: deleting_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: deleting_topics
          plus: 1
        doc: Number of topics plus one.
      - id: deleting_topics
        repeat: expr
        repeat-expr: deleting_topics_count_plus_one.value - 1
        type: topic_info
        doc: Topics whose share state is being deleted.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  share_group_state_partition_metadata_value:
    doc: 'Value of type 15: which topics'' share state the share coordinator holds for the group. Prefixed by its
      version; null (a tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: share_group_state_partition_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  consumer_group_regular_expression_key:
    doc: Key of a consumer group's resolved regular expression (type 16).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: regular_expression
        type: kafka_types::string
        doc: A regular expression members of the group subscribe with.
  consumer_group_regular_expression_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: message_version
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
        type: kafka_types::compact_string
        doc: The topics it matched.
      - id: version
        type: s8
        doc: Version of the cluster metadata the expression was resolved against.
      - id: timestamp
        type: s8
        doc: When it was resolved (ms).
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  consumer_group_regular_expression_value:
    doc: 'Value of type 16: the topics the regular expression matched when it was last resolved. Prefixed by its
      version; null (a tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: consumer_group_regular_expression_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_metadata_key:
    doc: Key of a streams group's metadata (type 17).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  streams_group_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: epoch
        type: s4
        doc: The group epoch, bumped when the group's members or topology change.
      - id: metadata_hash
        type: s8
        doc: Hash of the metadata of the group's topics; a change means the assignment must be computed again.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; Kafka 4.1 defines none here, so all stay encoded (4.2 adds tags 0 and 1).
  streams_group_metadata_value:
    doc: 'Value of type 17: the streams group''s epoch. Prefixed by its version; null (a tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_member_metadata_key:
    doc: Key of a streams group member's metadata (type 19).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  endpoint:
    doc: Where a Streams instance answers interactive queries.
    seq:
      - id: host
        type: kafka_types::compact_string
        doc: Host name.
      - id: port
        type: u2
        doc: TCP port.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  key_value:
    doc: A client tag.
    seq:
      - id: key
        type: kafka_types::compact_string
        doc: Tag name.
      - id: value
        type: kafka_types::compact_string
        doc: Tag value.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_member_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
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
        doc: The client's host as the coordinator saw it.
      - id: rebalance_timeout_ms
        type: s4
        doc: The rebalance timeout (ms), -1 if unknown.
      - id: topology_epoch
        type: s4
        doc: Epoch of the topology the member runs.
      - id: process_id
        type: kafka_types::compact_string
        doc: Id of the Streams instance (process) the member is a thread of; an instance may run several members.
      - id: user_endpoint_present
        type: s1
        doc: 'Null marker of the endpoint: -1 for null, else the endpoint follows (Kafka writes 1).'
      - id: user_endpoint
        if: user_endpoint_present >= 0
        type: endpoint
        doc: The endpoint for interactive queries, or null.
      - id: client_tags_count_plus_one
        type: uvarint
        -derive:
          count-of: client_tags
          plus: 1
        doc: Number of client tags plus one.
      - id: client_tags
        repeat: expr
        repeat-expr: client_tags_count_plus_one.value - 1
        type: key_value
        doc: Tags of the client, for rack-aware assignment of standby tasks.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_member_metadata_value:
    doc: 'Value of type 19: a streams group member''s client, topology and endpoint. Prefixed by its version; null
      (a tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_member_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_target_assignment_metadata_key:
    doc: Key of a streams group's target assignment metadata (type 20).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  streams_group_target_assignment_metadata_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: assignment_epoch
        type: s4
        doc: The group epoch the target assignment was computed for.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_target_assignment_metadata_value:
    doc: 'Value of type 20: the epoch of the streams group''s target assignment. Prefixed by its version; null (a
      tombstone) deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_target_assignment_metadata_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_target_assignment_member_key:
    doc: Key of a streams group member's target assignment (type 21).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  task_ids:
    doc: 'Tasks of one subtopology: its id and the partitions of its input topics, one task each.'
    seq:
      - id: subtopology_id
        type: kafka_types::compact_string
        doc: The subtopology.
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
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_target_assignment_member_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: active_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: active_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: active_tasks
        repeat: expr
        repeat-expr: active_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Active tasks, by subtopology.
      - id: standby_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: standby_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: standby_tasks
        repeat: expr
        repeat-expr: standby_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Standby tasks, by subtopology.
      - id: warmup_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: warmup_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: warmup_tasks
        repeat: expr
        repeat-expr: warmup_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Warm-up tasks, by subtopology.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_target_assignment_member_value:
    doc: 'Value of type 21: the tasks the assignor gives the member. Prefixed by its version; null (a tombstone)
      deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_target_assignment_member_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_current_member_assignment_key:
    doc: Key of a streams group member's current assignment (type 22).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
      - id: member_id
        type: kafka_types::string
        doc: The member.
  streams_group_current_member_assignment_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: member_epoch
        type: s4
        doc: The member epoch the coordinator expects in the member's next heartbeat.
      - id: previous_member_epoch
        type: s4
        doc: The epoch before the last bump, still accepted in case the member never learned of the bump.
      - id: state
        type: s1
        doc: 'The member state: 1 stable, 2 unrevoked tasks, 3 unreleased tasks, 127 unknown.'
      - id: active_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: active_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: active_tasks
        repeat: expr
        repeat-expr: active_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Active tasks the member has, by subtopology.
      - id: standby_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: standby_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: standby_tasks
        repeat: expr
        repeat-expr: standby_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Standby tasks the member has, by subtopology.
      - id: warmup_tasks_count_plus_one
        type: uvarint
        -derive:
          count-of: warmup_tasks
          plus: 1
        doc: Number of subtopologies plus one.
      - id: warmup_tasks
        repeat: expr
        repeat-expr: warmup_tasks_count_plus_one.value - 1
        type: task_ids
        doc: Warm-up tasks the member has, by subtopology.
      - id: active_tasks_pending_revocation_count_plus_one
        type: uvarint
        -derive:
          count-of: active_tasks_pending_revocation
          plus: 1
        doc: Number of subtopologies plus one.
      - id: active_tasks_pending_revocation
        repeat: expr
        repeat-expr: active_tasks_pending_revocation_count_plus_one.value - 1
        type: task_ids
        doc: Active tasks the member must give up, by subtopology.
      - id: standby_tasks_pending_revocation_count_plus_one
        type: uvarint
        -derive:
          count-of: standby_tasks_pending_revocation
          plus: 1
        doc: Number of subtopologies plus one.
      - id: standby_tasks_pending_revocation
        repeat: expr
        repeat-expr: standby_tasks_pending_revocation_count_plus_one.value - 1
        type: task_ids
        doc: Standby tasks the member must give up, by subtopology.
      - id: warmup_tasks_pending_revocation_count_plus_one
        type: uvarint
        -derive:
          count-of: warmup_tasks_pending_revocation
          plus: 1
        doc: Number of subtopologies plus one.
      - id: warmup_tasks_pending_revocation
        repeat: expr
        repeat-expr: warmup_tasks_pending_revocation_count_plus_one.value - 1
        type: task_ids
        doc: Warm-up tasks the member must give up, by subtopology.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_current_member_assignment_value:
    doc: 'Value of type 22: the member''s epoch and the tasks it has now. Prefixed by its version; null (a tombstone)
      deletes it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_current_member_assignment_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
  streams_group_topology_key:
    doc: Key of a streams group's topology (type 23).
    seq:
      - id: group_id
        type: kafka_types::string
        doc: The group.
  topic_config:
    doc: A topic-level config.
    seq:
      - id: key
        type: kafka_types::compact_string
        doc: Config name.
      - id: value
        type: kafka_types::compact_string
        doc: Config value.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_topology_topic_info:
    doc: An internal topic the topology needs.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: The topic name.
      - id: partitions
        type: s4
        doc: Its number of partitions; 0 when any number will do (always so for changelog topics).
      - id: replication_factor
        type: s2
        doc: Its replication factor; 0 for the broker's default.
      - id: topic_configs_count_plus_one
        type: uvarint
        -derive:
          count-of: topic_configs
          plus: 1
        doc: Number of configs plus one.
      - id: topic_configs
        repeat: expr
        repeat-expr: topic_configs_count_plus_one.value - 1
        type: topic_config
        doc: Topic-level configs to create it with.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  copartition_group:
    doc: Source topics that must have the same number of partitions, as indexes into lists of its subtopology.
    seq:
      - id: source_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: source_topics
          plus: 1
        doc: Number of indexes plus one.
      - id: source_topics
        repeat: expr
        repeat-expr: source_topics_count_plus_one.value - 1
        type: s2
        doc: Indexes into the subtopology's source topics.
      - id: source_topic_regex_count_plus_one
        type: uvarint
        -derive:
          count-of: source_topic_regex
          plus: 1
        doc: Number of indexes plus one.
      - id: source_topic_regex
        repeat: expr
        repeat-expr: source_topic_regex_count_plus_one.value - 1
        type: s2
        doc: Indexes into the subtopology's source topic regular expressions.
      - id: repartition_source_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: repartition_source_topics
          plus: 1
        doc: Number of indexes plus one.
      - id: repartition_source_topics
        repeat: expr
        repeat-expr: repartition_source_topics_count_plus_one.value - 1
        type: s2
        doc: Indexes into the subtopology's repartition source topics.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  subtopology:
    doc: 'A subtopology: a part of the topology that reads its own topics.'
    seq:
      - id: subtopology_id
        type: kafka_types::compact_string
        doc: The subtopology's id, unique in the topology.
      - id: source_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: source_topics
          plus: 1
        doc: Number of source topics plus one.
      - id: source_topics
        repeat: expr
        repeat-expr: source_topics_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: Topics it reads.
      - id: source_topic_regex_count_plus_one
        type: uvarint
        -derive:
          count-of: source_topic_regex
          plus: 1
        doc: Number of regular expressions plus one.
      - id: source_topic_regex
        repeat: expr
        repeat-expr: source_topic_regex_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: Regular expressions naming further topics it reads.
      - id: state_changelog_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: state_changelog_topics
          plus: 1
        doc: Number of changelog topics plus one.
      - id: state_changelog_topics
        repeat: expr
        repeat-expr: state_changelog_topics_count_plus_one.value - 1
        type: streams_group_topology_topic_info
        doc: Changelog topics of its state stores.
      - id: repartition_sink_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: repartition_sink_topics
          plus: 1
        doc: Number of repartition sink topics plus one.
      - id: repartition_sink_topics
        repeat: expr
        repeat-expr: repartition_sink_topics_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: Repartition topics it writes.
      - id: repartition_source_topics_count_plus_one
        type: uvarint
        -derive:
          count-of: repartition_source_topics
          plus: 1
        doc: Number of repartition source topics plus one.
      - id: repartition_source_topics
        repeat: expr
        repeat-expr: repartition_source_topics_count_plus_one.value - 1
        type: streams_group_topology_topic_info
        doc: Repartition topics it reads, which the group creates.
      - id: copartition_groups_count_plus_one
        type: uvarint
        -derive:
          count-of: copartition_groups
          plus: 1
        doc: Number of groups plus one.
      - id: copartition_groups
        repeat: expr
        repeat-expr: copartition_groups_count_plus_one.value - 1
        type: copartition_group
        doc: Groups of its source topics that must be co-partitioned.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_topology_value_body:
    doc: The value's fields, of version 0, the only one.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: epoch
        type: s4
        doc: Epoch of the topology.
      - id: subtopologies_count_plus_one
        type: uvarint
        -derive:
          count-of: subtopologies
          plus: 1
        doc: Number of subtopologies plus one.
      - id: subtopologies
        repeat: expr
        repeat-expr: subtopologies_count_plus_one.value - 1
        type: subtopology
        doc: Its subtopologies.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  streams_group_topology_value:
    doc: 'Value of type 23: the streams application''s topology. Prefixed by its version; null (a tombstone) deletes
      it.'
    seq:
      - id: version
        type: s2
        doc: Value version; 0 is the only one Kafka 4.1 defines.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: streams_group_topology_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
