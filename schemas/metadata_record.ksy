meta:
  id: metadata_record
  title: KRaft metadata records (__cluster_metadata)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The records of KRaft's `__cluster_metadata` topic and of the metadata snapshots taken from it
  (Kafka 2.8 early access, production-ready since 3.3). The controller quorum keeps the whole
  cluster state in this log: broker and controller registrations, topics and partitions with their
  replicas and leaders, configs, client quotas, ACLs, SCRAM credentials, delegation tokens, producer
  id blocks and finalized feature levels. Each record value is framed as an unsigned varint frame
  version (1), an unsigned varint api key that names the record type and an unsigned varint version
  of that type; the record itself follows in Kafka's flexible-version message encoding (compact
  strings and arrays, each struct ending in a tagged-field section). Record types and versions this
  schema does not know are kept as raw bytes. The control records of the same log (leader changes,
  snapshot headers and footers, voter sets) sit in control batches and are not described here.
doc-ref: https://github.com/apache/kafka/tree/trunk/metadata/src/main/resources/common/metadata
seq:
  - id: frame_version
    type: uvarint
    doc: Version of the record framing, an unsigned varint; always 1.
  - id: api_key
    type: uvarint
    doc: |
      Record type: 0 RegisterBroker, 1 UnregisterBroker, 2 Topic, 3 Partition, 4 Config,
      5 PartitionChange, 7 FenceBroker, 8 UnfenceBroker, 9 RemoveTopic, 10 DelegationToken,
      11 UserScramCredential, 12 FeatureLevel, 14 ClientQuota, 15 ProducerIds,
      17 BrokerRegistrationChange, 18 AccessControlEntry, 19 RemoveAccessControlEntry, 20 NoOp,
      21 ZkMigrationState, 22 RemoveUserScramCredential, 23 BeginTransaction, 24 EndTransaction,
      25 AbortTransaction, 26 RemoveDelegationToken, 27 RegisterController, 28 ClearElr (6, 13 and
      16 are not defined).
  - id: version
    type: uvarint
    doc: Version of that record type; with the api key it selects the layout of the body.
  - id: body
    size-eos: true
    type:
      switch-on: 'version.value < 1000 ? api_key.value * 1000 + version.value : -1'
      cases:
        0: register_broker_record(version.value)
        1: register_broker_record(version.value)
        2: register_broker_record(version.value)
        3: register_broker_record(version.value)
        1000: unregister_broker_record(version.value)
        2000: topic_record(version.value)
        3000: partition_record(version.value)
        3001: partition_record(version.value)
        3002: partition_record(version.value)
        4000: config_record(version.value)
        5000: partition_change_record(version.value)
        5001: partition_change_record(version.value)
        5002: partition_change_record(version.value)
        7000: fence_broker_record(version.value)
        8000: unfence_broker_record(version.value)
        9000: remove_topic_record(version.value)
        10000: delegation_token_record(version.value)
        11000: user_scram_credential_record(version.value)
        12000: feature_level_record(version.value)
        14000: client_quota_record(version.value)
        15000: producer_ids_record(version.value)
        17000: broker_registration_change_record(version.value)
        17001: broker_registration_change_record(version.value)
        17002: broker_registration_change_record(version.value)
        18000: access_control_entry_record(version.value)
        19000: remove_access_control_entry_record(version.value)
        20000: no_op_record(version.value)
        21000: zk_migration_state_record(version.value)
        22000: remove_user_scram_credential_record(version.value)
        23000: begin_transaction_record(version.value)
        24000: end_transaction_record(version.value)
        25000: abort_transaction_record(version.value)
        26000: remove_delegation_token_record(version.value)
        27000: register_controller_record(version.value)
        28000: clear_elr_record(version.value)
    -require-eos: true
    doc: The record of that type and version; raw bytes for a type or version this schema does not know.
types:
  broker_endpoint:
    doc: A listener on which a registered broker can be reached.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Listener name, such as PLAINTEXT; unique among the node's endpoints.
      - id: host
        type: kafka_types::compact_string
        doc: Host name or address the listener advertises.
      - id: port
        type: u2
        doc: TCP port of the listener.
      - id: security_protocol
        type: s2
        doc: 'Security protocol of the listener: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  broker_feature:
    doc: A feature a broker supports, with the range of levels it can run.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Feature name, such as metadata.version.
      - id: min_supported_version
        type: s2
        doc: Lowest level of the feature the broker supports.
      - id: max_supported_version
        type: s2
        doc: Highest level of the feature the broker supports.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  register_broker_record_tag:
    doc: |
      One tagged field of a RegisterBrokerRecord, decoded by its tag: from version 3, 0 is the log
      directories; other tags stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
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
          switch-on: 'tag.value == 0 and version < 3 ? -1 : tag.value'
          cases:
            0: kafka_types::compact_uuid_array
        doc: |
          The field's data: tag 0 decodes as the UUIDs of the broker's available log directories;
          other tags stay raw bytes.
  register_broker_record_tags:
    doc: |
      Tagged fields of a RegisterBrokerRecord: from version 3, tag 0 is the broker's available log
      directories; other tags stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: register_broker_record_tag(version)
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  register_broker_record:
    doc: |
      Registers a broker with the controller quorum (again after every restart), saying how to reach
      it and which features it supports. Versions 0 to 3: version 1 adds whether the broker is in
      controlled shutdown, 2 (KIP-866) whether it is a ZooKeeper broker in migration mode, 3
      (KIP-858) the broker's available log directories, as tag 0.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: broker_id
        type: s4
        doc: Id of the broker (its node.id).
      - id: is_migrating_zk_broker
        type: u1
        -json:
          as: bool
        if: version >= 2
        doc: |
          Boolean: 1 if this is a ZooKeeper-mode broker registering during a ZooKeeper to KRaft
          migration, 0 otherwise.
      - id: incarnation_id
        size: 16
        -json:
          as: uuid
        doc: Random UUID of this run of the broker process, new at every start.
      - id: broker_epoch
        type: s8
        doc: |
          Broker epoch the active controller gave this registration; every new registration gets a
          higher one.
      - id: end_points_count_plus_one
        type: uvarint
        -derive:
          count-of: end_points
          plus: 1
        doc: Number of endpoints plus one.
      - id: end_points
        repeat: expr
        repeat-expr: end_points_count_plus_one.value - 1
        type: broker_endpoint
        doc: Listeners on which the broker can be reached.
      - id: features_count_plus_one
        type: uvarint
        -derive:
          count-of: features
          plus: 1
        doc: Number of features plus one.
      - id: features
        repeat: expr
        repeat-expr: features_count_plus_one.value - 1
        type: broker_feature
        doc: Features the broker supports, with their level ranges.
      - id: rack
        type: kafka_types::compact_nullable_string
        doc: Rack of the broker (broker.rack), or null if none is set.
      - id: fenced
        type: u1
        -json:
          as: bool
        doc: 'Boolean: 1 if the broker is fenced, so it is in no ISR and leads no partition; 0 if not.'
      - id: in_controlled_shutdown
        type: u1
        -json:
          as: bool
        if: version >= 1
        doc: |
          Boolean: 1 if the broker is in controlled shutdown, moving its leaderships away before it
          stops; 0 if not.
      - id: tagged_fields
        type: register_broker_record_tags(version)
        -tagged:
          - id: log_dirs
            tag: 0
            default: []
            after: in_controlled_shutdown
            json:
              as: uuid
            if: version >= 3
        doc: 'Tagged fields: tag 0 holds the broker''s available log directories; others stay raw.'
  unregister_broker_record:
    doc: |
      Removes a broker's registration, as when an administrator unregisters a decommissioned broker.
      Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: broker_id
        type: s4
        doc: Id of the broker being unregistered.
      - id: broker_epoch
        type: s8
        doc: Broker epoch of the registration being removed.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  topic_record:
    doc: |
      Creates a topic, binding its name to its id; the topic's partitions follow as
      PartitionRecords. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Topic name.
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic, by which other records refer to it.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  partition_record_tag:
    doc: |
      One tagged field of a PartitionRecord, decoded by its tag: 0 is the leader recovery state;
      from version 2, 1 is the eligible leader replicas and 2 the last known ELR; other tags stay
      raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
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
          switch-on: '(tag.value == 1 or tag.value == 2) and version < 2 ? -1 : tag.value'
          cases:
            0: kafka_types::tagged_int8
            1: kafka_types::compact_int32_array
            2: kafka_types::compact_int32_array
        doc: |
          The field's data: tag 0 decodes as the leader recovery state (int8: 0 elected from the ISR
          or recovered, 1 still recovering from an unclean election), tag 1 as the eligible leader
          replicas and tag 2 as the last known ELR (broker ids, or null); other tags stay raw bytes.
  partition_record_tags:
    doc: |
      Tagged fields of a PartitionRecord: tag 0 is the leader recovery state; from version 2, 1 is
      the eligible leader replicas and 2 the last known ELR; other tags stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: partition_record_tag(version)
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  partition_record:
    doc: |
      The full state of one partition: replicas, in-sync replicas, any reassignment in progress,
      leader and epochs. Written when a partition is created and in snapshots. Versions 0 to 2:
      version 1 (KIP-858) adds the log directory of each replica, 2 (KIP-966) the eligible leader
      replicas (ELR) and the last known ELR, as tags 1 and 2.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: partition_id
        type: s4
        doc: Index of the partition within its topic.
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic the partition belongs to.
      - id: replicas_count_plus_one
        type: uvarint
        -derive:
          count-of: replicas
          plus: 1
        doc: Number of replicas plus one.
      - id: replicas
        repeat: expr
        repeat-expr: replicas_count_plus_one.value - 1
        type: s4
        doc: Broker ids of the replicas, in order of preference for leadership.
      - id: isr_count_plus_one
        type: uvarint
        -derive:
          count-of: isr
          plus: 1
        doc: Number of in-sync replicas plus one.
      - id: isr
        repeat: expr
        repeat-expr: isr_count_plus_one.value - 1
        type: s4
        doc: Broker ids of the in-sync replicas (ISR).
      - id: removing_replicas_count_plus_one
        type: uvarint
        -derive:
          count-of: removing_replicas
          plus: 1
        doc: Number of removing replicas plus one.
      - id: removing_replicas
        repeat: expr
        repeat-expr: removing_replicas_count_plus_one.value - 1
        type: s4
        doc: Broker ids of the replicas an ongoing reassignment is removing.
      - id: adding_replicas_count_plus_one
        type: uvarint
        -derive:
          count-of: adding_replicas
          plus: 1
        doc: Number of adding replicas plus one.
      - id: adding_replicas
        repeat: expr
        repeat-expr: adding_replicas_count_plus_one.value - 1
        type: s4
        doc: Broker ids of the replicas an ongoing reassignment is adding.
      - id: leader
        type: s4
        doc: Broker id of the leader, -1 if the partition has none.
      - id: leader_epoch
        type: s4
        doc: Leader epoch, raised every time the leader changes.
      - id: partition_epoch
        type: s4
        doc: Partition epoch, raised on every change to the partition's state.
      - id: directories_count_plus_one
        type: uvarint
        -derive:
          count-of: directories
          plus: 1
        if: version >= 1
        doc: Number of log directories plus one.
      - id: directories
        repeat: expr
        repeat-expr: directories_count_plus_one.value - 1
        size: 16
        -json:
          as: uuid
        if: version >= 1
        doc: UUID of the log directory holding each replica, in the order of replicas.
      - id: tagged_fields
        type: partition_record_tags(version)
        -tagged:
          - id: leader_recovery_state
            tag: 0
            default: 0
            after: leader
          - id: eligible_leader_replicas
            tag: 1
            default: null
            after: directories
            if: version >= 2
          - id: last_known_elr
            tag: 2
            default: null
            after: eligible_leader_replicas
            if: version >= 2
        doc: |
          Tagged fields: tag 0 holds the leader recovery state (0 when absent), 1 the eligible
          leader replicas, 2 the last known ELR; others stay raw.
  config_record:
    doc: Sets or deletes one configuration entry of a resource. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: resource_type
        type: s1
        doc: 'Type of the resource: 2 topic, 4 broker, 16 client metrics, 32 group.'
      - id: resource_name
        type: kafka_types::compact_string
        doc: |
          Name of the resource: a topic name, a broker id in decimal, or empty for the cluster-wide
          broker default.
      - id: name
        type: kafka_types::compact_string
        doc: Configuration key.
      - id: value
        type: kafka_types::compact_nullable_string
        doc: New value of the key, or null to delete the key.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  partition_change_record_tag:
    doc: |
      One tagged field of a PartitionChangeRecord, decoded by its tag (0 to 8; 8 from version 1, 6
      and 7 from version 2); other tags stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
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
          switch-on: 'tag.value == 8 and version < 1 ? -1 : ((tag.value == 6 or tag.value == 7) and version < 2
            ? -1 : tag.value)'
          cases:
            0: kafka_types::compact_int32_array
            1: kafka_types::tagged_int32
            2: kafka_types::compact_int32_array
            3: kafka_types::compact_int32_array
            4: kafka_types::compact_int32_array
            5: kafka_types::tagged_int8
            6: kafka_types::compact_int32_array
            7: kafka_types::compact_int32_array
            8: kafka_types::compact_uuid_array
        doc: |
          The field's data: tag 0 decodes as the new ISR, 2 the new replicas, 3 the new removing
          replicas and 4 the new adding replicas (broker ids; null for no change); tag 1 the new
          leader (int32: -1 for no leader, -2 for no change); tag 5 the leader recovery state (int8:
          -1 for no change, 0 elected from the ISR or recovered, 1 still recovering from an unclean
          election); tags 6 and 7 the new eligible leader replicas and the new last known ELR
          (broker ids; null for no change); tag 8 the new log directory UUID of each replica (null
          for no change); other tags stay raw bytes.
  partition_change_record_tags:
    doc: |
      Tagged fields of a PartitionChangeRecord: tag 0 is the new ISR, 1 the new leader,
      2 the new replicas, 3 the new removing replicas, 4 the new adding replicas, 5 the leader
      recovery state, 6 the new ELR, 7 the new last known ELR, 8 the new log directories; other tags
      stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: partition_change_record_tag(version)
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  partition_change_record:
    doc: |
      Changes part of a partition's state; each change is a tagged field, and an absent field leaves
      that part unchanged. Versions 0 to 2: version 1 (KIP-858) adds the replicas' log directories,
      as tag 8, 2 (KIP-966) the eligible leader replicas (ELR) and the last known ELR, as tags 6
      and 7.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: partition_id
        type: s4
        doc: Index of the partition within its topic.
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic the partition belongs to.
      - id: tagged_fields
        type: partition_change_record_tags(version)
        -tagged:
          - id: isr
            tag: 0
            default: null
            after: topic_id
          - id: leader
            tag: 1
            default: -2
            after: isr
          - id: replicas
            tag: 2
            default: null
            after: leader
          - id: removing_replicas
            tag: 3
            default: null
            after: replicas
          - id: adding_replicas
            tag: 4
            default: null
            after: removing_replicas
          - id: leader_recovery_state
            tag: 5
            default: -1
            after: adding_replicas
          - id: directories
            tag: 8
            default: null
            after: leader_recovery_state
            json:
              as: uuid
            if: version >= 1
          - id: eligible_leader_replicas
            tag: 6
            default: null
            after: directories
            if: version >= 2
          - id: last_known_elr
            tag: 7
            default: null
            after: eligible_leader_replicas
            if: version >= 2
        doc: Tagged fields holding the changes, tags 0 to 8; others stay raw.
  fence_broker_record:
    doc: |
      Fences a broker: it leaves every ISR and can lead no partition. Metadata versions that know
      BrokerRegistrationChangeRecord write that instead. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: id
        type: s4
        doc: Id of the broker to fence.
      - id: epoch
        type: s8
        doc: Broker epoch of the registration being fenced.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  unfence_broker_record:
    doc: |
      Unfences a broker so it may rejoin ISRs and lead partitions again. Metadata versions that know
      BrokerRegistrationChangeRecord write that instead. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: id
        type: s4
        doc: Id of the broker to unfence.
      - id: epoch
        type: s8
        doc: Broker epoch of the registration being unfenced.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remove_topic_record:
    doc: Deletes a topic together with all of its partitions. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topic_id
        size: 16
        -json:
          as: uuid
        doc: UUID of the topic to delete.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  delegation_token_record:
    doc: Creates a delegation token or records its renewal. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: owner
        type: kafka_types::compact_string
        doc: Principal that owns the token.
      - id: requester
        type: kafka_types::compact_string
        doc: Principal that asked for the token.
      - id: renewers_count_plus_one
        type: uvarint
        -derive:
          count-of: renewers
          plus: 1
        doc: Number of renewers plus one.
      - id: renewers
        repeat: expr
        repeat-expr: renewers_count_plus_one.value - 1
        type: kafka_types::compact_string
        doc: Principals allowed to renew the token.
      - id: issue_timestamp
        type: s8
        doc: When the token was issued (ms since the Unix epoch).
      - id: max_timestamp
        type: s8
        doc: Time after which the token can no longer be renewed (ms since the Unix epoch).
      - id: expiration_timestamp
        type: s8
        doc: Time by which the token must next be renewed, or it expires (ms since the Unix epoch).
      - id: token_id
        type: kafka_types::compact_string
        doc: Id of the token.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  user_scram_credential_record:
    doc: Creates or replaces a user's SCRAM credential for one mechanism (KIP-554). Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: User name.
      - id: mechanism
        type: s1
        doc: 'SCRAM mechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.'
      - id: salt
        type: kafka_types::compact_bytes
        doc: Random salt of the credential.
      - id: stored_key
        type: kafka_types::compact_bytes
        doc: Stored key, with which the server checks the client's proof.
      - id: server_key
        type: kafka_types::compact_bytes
        doc: Server key, with which the client checks the server's signature.
      - id: iterations
        type: s4
        doc: Number of hash iterations the credential was derived with.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  feature_level_record:
    doc: |
      Sets the cluster-wide finalized level of one feature, such as metadata.version. Every new
      metadata log and snapshot starts with the one for metadata.version, so this record never goes
      beyond version 0. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Feature name, such as metadata.version.
      - id: feature_level
        type: s2
        doc: Finalized level of the feature; 0 turns the feature off.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  entity_data:
    doc: 'One part of a client quota entity''s name: an entity type and a name.'
    seq:
      - id: entity_type
        type: kafka_types::compact_string
        doc: 'Entity type: user, client-id or ip.'
      - id: entity_name
        type: kafka_types::compact_nullable_string
        doc: Entity name, or null for the default entity of that type.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  client_quota_record:
    doc: |
      Sets or removes one quota value of a client quota entity (a user, a client id, both together,
      or an IP address). Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: entity_count_plus_one
        type: uvarint
        -derive:
          count-of: entity
          plus: 1
        doc: Number of entity parts plus one.
      - id: entity
        repeat: expr
        repeat-expr: entity_count_plus_one.value - 1
        type: entity_data
        doc: The parts that together name the quota entity.
      - id: key
        type: kafka_types::compact_string
        doc: Quota key, such as producer_byte_rate.
      - id: value
        type: f8
        doc: New value of the quota; ignored when remove is set.
      - id: remove
        type: u1
        -json:
          as: bool
        doc: 'Boolean: 1 to remove the quota key, 0 to set it to value.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  producer_ids_record:
    doc: |
      Hands a block of producer ids to a broker (KIP-730); the record holds where the next block
      starts. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: broker_id
        type: s4
        doc: Id of the broker that asked for the block.
      - id: broker_epoch
        type: s8
        doc: Broker epoch of that broker, -1 if unknown.
      - id: next_producer_id
        type: s8
        doc: First producer id of the next block to hand out, one past the last id of the block just given.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  broker_registration_change_record_tag:
    doc: |
      One tagged field of a BrokerRegistrationChangeRecord, decoded by its tag: 0 is the
      fencing change, 1 the controlled shutdown change, 2 the log directories; other tags stay raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
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
          switch-on: 'tag.value == 1 and version < 1 ? -1 : (tag.value == 2 and version < 2 ? -1 : tag.value)'
          cases:
            0: kafka_types::tagged_int8
            1: kafka_types::tagged_int8
            2: kafka_types::compact_uuid_array
        doc: |
          The field's data: tag 0 decodes as the fencing change (int8: -1 unfenced, 0 no change,
          1 fenced), tag 1 as the controlled shutdown change (int8: 0 no change, 1 in controlled
          shutdown), tag 2 as the UUIDs of the broker's available log directories; other tags stay
          raw bytes.
  broker_registration_change_record_tags:
    doc: |
      Tagged fields of a BrokerRegistrationChangeRecord: tag 0 is the fencing change,
      1 the controlled shutdown change, 2 the broker's available log directories; other tags stay
      raw.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: broker_registration_change_record_tag(version)
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  broker_registration_change_record:
    doc: |
      Changes a broker's registration in place, without a new registration; each change is a tagged
      field, and an absent one means no change. Versions 0 to 2: version 1 adds whether the broker
      is in controlled shutdown, as tag 1, 2 (KIP-858) the broker's available log directories, as
      tag 2.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: broker_id
        type: s4
        doc: Id of the broker.
      - id: broker_epoch
        type: s8
        doc: Broker epoch of the registration being changed.
      - id: tagged_fields
        type: broker_registration_change_record_tags(version)
        -tagged:
          - id: fenced
            tag: 0
            default: 0
            after: broker_epoch
          - id: in_controlled_shutdown
            tag: 1
            default: 0
            after: fenced
            if: version >= 1
          - id: log_dirs
            tag: 2
            default: []
            after: in_controlled_shutdown
            json:
              as: uuid
            if: version >= 2
        doc: |
          Tagged fields: tag 0 holds the fencing change, 1 the controlled shutdown change, 2 the
          available log directories; others stay raw.
  access_control_entry_record:
    doc: |
      Creates an ACL binding for the authorizer that keeps its ACLs in the metadata log (KIP-801).
      Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: id
        size: 16
        -json:
          as: uuid
        doc: UUID of this ACL.
      - id: resource_type
        type: s1
        doc: 'Resource type: 2 topic, 3 group, 4 cluster, 5 transactional id, 6 delegation token, 7 user.'
      - id: resource_name
        type: kafka_types::compact_string
        doc: Resource name, or the name prefix for a prefixed pattern; * for every resource.
      - id: pattern_type
        type: s1
        doc: 'How resource_name matches: 3 literally, 4 as a prefix.'
      - id: principal
        type: kafka_types::compact_string
        doc: Principal the ACL applies to, such as User:alice; User:* for every principal.
      - id: host
        type: kafka_types::compact_string
        doc: Client host the ACL applies to; * for every host.
      - id: operation
        type: s1
        doc: |
          Operation: 2 all, 3 read, 4 write, 5 create, 6 delete, 7 alter, 8 describe, 9 cluster
          action, 10 describe configs, 11 alter configs, 12 idempotent write, 13 create tokens,
          14 describe tokens.
      - id: permission_type
        type: s1
        doc: 'Permission: 2 deny, 3 allow.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remove_access_control_entry_record:
    doc: Deletes an ACL binding. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: id
        size: 16
        -json:
          as: uuid
        doc: UUID of the ACL to delete.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  no_op_record:
    doc: |
      Carries no data. The active controller writes one at an interval so the metadata log keeps
      advancing and brokers can tell they are caught up (KIP-835). Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  zk_migration_state_record:
    doc: |
      Marks the progress of a ZooKeeper to KRaft migration (KIP-866). Kafka 4.0 and later no longer
      migrate, but still read it in logs of clusters that migrated under 3.x. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: zk_migration_state
        type: s1
        doc: |
          Migration state: 0 none, 1 migration, 2 pre-migration, 3 post-migration (values 1 and
          2 meant the reverse in Kafka 3.4).
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  remove_user_scram_credential_record:
    doc: Deletes a user's SCRAM credential for one mechanism. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: User name.
      - id: mechanism
        type: s1
        doc: 'SCRAM mechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  begin_transaction_record_tag:
    doc: |
      One tagged field of a BeginTransactionRecord, decoded by its tag: 0 is the transaction's name;
      other tags stay raw.
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
            0: kafka_types::compact_nullable_string
        doc: |
          The field's data: tag 0 decodes as the transaction's optional name (a nullable string);
          other tags stay raw bytes.
  begin_transaction_record_tags:
    doc: |
      Tagged fields of a BeginTransactionRecord: tag 0 is an optional name for the transaction;
      other tags stay raw.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: begin_transaction_record_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  begin_transaction_record:
    doc: |
      Opens a metadata transaction (KIP-868): the records up to the matching EndTransactionRecord
      apply as one, or not at all if an AbortTransactionRecord ends it. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: tagged_fields
        type: begin_transaction_record_tags
        -tagged:
          - id: name
            tag: 0
            default: null
        doc: 'Tagged fields: tag 0 holds an optional name for the transaction; others stay raw.'
  end_transaction_record:
    doc: Commits the open metadata transaction; it has no fields. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  abort_transaction_record_tag:
    doc: |
      One tagged field of an AbortTransactionRecord, decoded by its tag: 0 is the reason; other tags
      stay raw.
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
            0: kafka_types::compact_nullable_string
        doc: |
          The field's data: tag 0 decodes as the optional reason for the abort (a nullable string);
          other tags stay raw bytes.
  abort_transaction_record_tags:
    doc: |
      Tagged fields of an AbortTransactionRecord: tag 0 is an optional reason for the abort; other
      tags stay raw.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: abort_transaction_record_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  abort_transaction_record:
    doc: |
      Aborts the open metadata transaction; its records since the BeginTransactionRecord are
      discarded. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: tagged_fields
        type: abort_transaction_record_tags
        -tagged:
          - id: reason
            tag: 0
            default: null
        doc: 'Tagged fields: tag 0 holds an optional reason for the abort; others stay raw.'
  remove_delegation_token_record:
    doc: Deletes a delegation token. Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: token_id
        type: kafka_types::compact_string
        doc: Id of the token to delete.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  controller_endpoint:
    doc: A listener on which a registered controller can be reached.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Listener name, such as PLAINTEXT; unique among the node's endpoints.
      - id: host
        type: kafka_types::compact_string
        doc: Host name or address the listener advertises.
      - id: port
        type: u2
        doc: TCP port of the listener.
      - id: security_protocol
        type: s2
        doc: 'Security protocol of the listener: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL.'
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  controller_feature:
    doc: A feature a controller supports, with the range of levels it can run.
    seq:
      - id: name
        type: kafka_types::compact_string
        doc: Feature name, such as metadata.version.
      - id: min_supported_version
        type: s2
        doc: Lowest level of the feature the controller supports.
      - id: max_supported_version
        type: s2
        doc: Highest level of the feature the controller supports.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  register_controller_record:
    doc: |
      Registers a KRaft controller with the quorum, saying how to reach it and which features it
      supports (KIP-919). Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: controller_id
        type: s4
        doc: Id of the controller (its node.id).
      - id: incarnation_id
        size: 16
        -json:
          as: uuid
        doc: Random UUID of this run of the controller process, new at every start.
      - id: zk_migration_ready
        type: u1
        -json:
          as: bool
        doc: |
          Boolean: 1 if the controller has the configuration a ZooKeeper to KRaft migration needs,
          0 if not.
      - id: end_points_count_plus_one
        type: uvarint
        -derive:
          count-of: end_points
          plus: 1
        doc: Number of endpoints plus one.
      - id: end_points
        repeat: expr
        repeat-expr: end_points_count_plus_one.value - 1
        type: controller_endpoint
        doc: Listeners on which the controller can be reached.
      - id: features_count_plus_one
        type: uvarint
        -derive:
          count-of: features
          plus: 1
        doc: Number of features plus one.
      - id: features
        repeat: expr
        repeat-expr: features_count_plus_one.value - 1
        type: controller_feature
        doc: Features the controller supports, with their level ranges.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
  clear_elr_record:
    doc: |
      Clears the eligible leader replicas (ELR) and last known ELR of one topic's partitions, or of
      every partition (KIP-966). Version 0 only.
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topic_name
        type: kafka_types::compact_string
        doc: Topic whose ELRs to clear; empty to clear them in every topic.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        doc: Tagged fields; ones this version does not define stay encoded here.
