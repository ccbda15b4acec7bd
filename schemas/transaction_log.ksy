meta:
  id: transaction_log
  title: __transaction_state records (transaction coordinator)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
    - uvarint
doc: |
  The records of the `__transaction_state` topic, where the transaction coordinator keeps each
  transactional id's producer, epoch, state and partitions (since Kafka 0.11, KIP-98). This root
  type is the key (a version, then the transactional id); the value is `transaction_log_value`,
  version 0, or version 1 (flexible, Kafka 3.5 and later; written when transaction.version is 1
  or more). A null value is a tombstone.
doc-ref: https://github.com/apache/kafka/blob/trunk/transaction-coordinator/src/main/resources/common/message/TransactionLogValue.json
seq:
  - id: version
    type: s2
    -default: 0
    doc: Key version, 0.
  - id: transactional_id
    type: kafka_types::string
    doc: The producer's transactional.id.
enums:
  transaction_status:
    0:
      id: empty
      doc: No transaction in progress.
    1:
      id: ongoing
      doc: A transaction is open.
    2:
      id: prepare_commit
      doc: Commit decided; markers being written.
    3:
      id: prepare_abort
      doc: Abort decided; markers being written.
    4:
      id: complete_commit
      doc: Committed; markers written.
    5:
      id: complete_abort
      doc: Aborted; markers written.
    6:
      id: dead
      doc: The transactional id expired.
    7:
      id: prepare_epoch_fence
      doc: The producer epoch is being fenced.
types:
  partitions_schema:
    doc: A topic and its partitions (in the compact encodings from version 1).
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: topic
        type:
          switch-on: version >= 1
          cases:
            'true': kafka_types::compact_string
            _: kafka_types::string
        doc: The topic.
      - id: partition_ids_count
        type: s4
        -derive:
          count-of: partition_ids
        if: version < 1
        doc: Number of partitions.
      - id: partition_ids_count_plus_one
        type: uvarint
        -derive:
          count-of: partition_ids
          plus: 1
        if: version >= 1
        doc: Number of partitions plus one.
      - id: partition_ids
        repeat: expr
        repeat-expr: 'version >= 1 ? partition_ids_count_plus_one.value - 1 : partition_ids_count'
        type: s4
        doc: The partitions.
      - id: tagged_fields
        type: kafka_types::tagged_fields
        if: version >= 1
        doc: Tagged fields.
  transaction_log_value_body_tag:
    doc: One tagged field of the value, decoded when its tag is one Kafka defines.
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
            1: kafka_types::tagged_int64
            2: kafka_types::tagged_int16
            3: kafka_types::tagged_int16
        doc: The field's data, decoded by its tag; other tags stay raw bytes.
  transaction_log_value_body_tags:
    doc: The value's tagged fields.
    seq:
      - id: count
        type: uvarint
        -derive:
          count-of: fields
        doc: Number of tagged fields.
      - id: fields
        type: transaction_log_value_body_tag
        repeat: expr
        repeat-expr: count.value
        doc: The tagged fields, by ascending tag.
  transaction_log_value_body:
    doc: |
      The value's fields at its version: version 0, or version 1 (flexible: compact strings and
      arrays, and tagged fields). The tagged fields (Kafka 4.0, KIP-890) are tag 0
      PreviousProducerId (int64, default -1), tag 1 NextProducerId (int64, default -1), tag 2
      ClientTransactionVersion (int16, default 0) and tag 3 NextProducerEpoch (int16, default -1).
    params:
      - id: version
        type: s2
        doc: Version of the message (from the framing before it); what that version lacks is absent.
    seq:
      - id: producer_id
        type: s8
        doc: The producer id of the transactional id.
      - id: producer_epoch
        type: s2
        doc: Its current epoch.
      - id: transaction_timeout_ms
        type: s4
        doc: The transaction timeout.
      - id: transaction_status
        type: s1
        enum: transaction_status
        doc: The transaction's state.
      - id: transaction_partitions_count
        type: s4
        -derive:
          count-of: transaction_partitions
          if-absent: -1
        if: version < 1
        doc: Number of topics in the transaction; -1 for null (written when the state is Empty).
      - id: transaction_partitions_count_plus_one
        type: uvarint
        -derive:
          count-of: transaction_partitions
          plus: 1
          if-absent: 0
        if: version >= 1
        doc: Number of topics plus one; 0 for null.
      - id: transaction_partitions
        repeat: expr
        repeat-expr: 'version >= 1 ? transaction_partitions_count_plus_one.value - 1 : transaction_partitions_count'
        type: partitions_schema(version)
        if: 'version >= 1 ? transaction_partitions_count_plus_one.value > 0 : transaction_partitions_count >= 0'
        doc: The partitions of the transaction, by topic.
      - id: transaction_last_update_timestamp_ms
        type: s8
        doc: When the state last changed.
      - id: transaction_start_timestamp_ms
        type: s8
        doc: When the transaction started.
      - id: tagged_fields
        type: transaction_log_value_body_tags
        -tagged:
          - id: previous_producer_id
            tag: 0
            default: -1
            after: producer_id
            if: version >= 1
          - id: next_producer_id
            tag: 1
            default: -1
            after: previous_producer_id
            if: version >= 1
          - id: next_producer_epoch
            tag: 3
            default: -1
            after: producer_epoch
            if: version >= 1
          - id: client_transaction_version
            tag: 2
            default: 0
            after: transaction_start_timestamp_ms
            if: version >= 1
        if: version >= 1
        doc: Tagged fields.
  transaction_log_value:
    doc: The value, prefixed by its version.
    seq:
      - id: version
        type: s2
        doc: Value version, 0 or 1.
      - id: body
        size-eos: true
        type:
          switch-on: version
          cases:
            0: transaction_log_value_body(version)
            1: transaction_log_value_body(version)
        doc: The fields of that version; raw bytes for a version this schema does not know.
