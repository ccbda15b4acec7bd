meta:
  id: consumer_protocol
  title: Consumer group protocol subscription and assignment
  license: Apache-2.0
  endian: be
  imports:
    - kafka_types
doc: |
  What consumers of the classic group protocol exchange through the coordinator, kept in the
  members' `subscription` and `assignment` bytes of `__consumer_offsets` group metadata when
  the group's protocol type is "consumer". Each is prefixed by its version: 0 (Kafka 0.9), 1
  (2.4, KIP-429: owned partitions), 2 (3.0: generation), 3 (3.4, KIP-881: rack). This root
  type is the subscription; `assignment` is the other.
doc-ref: https://github.com/apache/kafka/blob/trunk/clients/src/main/resources/common/message/ConsumerProtocolSubscription.json
seq:
  - id: version
    type: s2
    doc: Subscription version, 0 to 3.
  - id: body
    size-eos: true
    type:
      switch-on: version
      cases:
        0: subscription_v0
        1: subscription_v1
        2: subscription_v2
        3: subscription_v3
    doc: The fields of that version; raw bytes for a version this schema does not know.
types:
  subscription_v0:
    doc: Version 0.
    seq:
      - id: topics_count
        type: s4
        -derive:
          count-of: topics
        doc: Number of topics.
      - id: topics
        type: kafka_types::string
        repeat: expr
        repeat-expr: topics_count
        doc: The subscribed topics.
      - id: user_data
        type: kafka_types::nullable_bytes
        doc: The assignor's data, or null.
  subscription_v1:
    doc: Version 1 (Kafka 2.4, KIP-429).
    seq:
      - id: topics_count
        type: s4
        -derive:
          count-of: topics
        doc: Number of topics.
      - id: topics
        type: kafka_types::string
        repeat: expr
        repeat-expr: topics_count
        doc: The subscribed topics.
      - id: user_data
        type: kafka_types::nullable_bytes
        doc: The assignor's data, or null.
      - id: owned_partitions_count
        type: s4
        -derive:
          count-of: owned_partitions
        doc: Number of topics with owned partitions.
      - id: owned_partitions
        type: topic_partitions
        repeat: expr
        repeat-expr: owned_partitions_count
        doc: The partitions the member owns, for cooperative rebalancing.
  subscription_v2:
    doc: Version 2 (Kafka 3.0).
    seq:
      - id: topics_count
        type: s4
        -derive:
          count-of: topics
        doc: Number of topics.
      - id: topics
        type: kafka_types::string
        repeat: expr
        repeat-expr: topics_count
        doc: The subscribed topics.
      - id: user_data
        type: kafka_types::nullable_bytes
        doc: The assignor's data, or null.
      - id: owned_partitions_count
        type: s4
        -derive:
          count-of: owned_partitions
        doc: Number of topics with owned partitions.
      - id: owned_partitions
        type: topic_partitions
        repeat: expr
        repeat-expr: owned_partitions_count
        doc: The partitions the member owns, for cooperative rebalancing.
      - id: generation_id
        type: s4
        doc: The generation the owned partitions belong to, -1 if unknown.
  subscription_v3:
    doc: Version 3 (Kafka 3.4, KIP-881).
    seq:
      - id: topics_count
        type: s4
        -derive:
          count-of: topics
        doc: Number of topics.
      - id: topics
        type: kafka_types::string
        repeat: expr
        repeat-expr: topics_count
        doc: The subscribed topics.
      - id: user_data
        type: kafka_types::nullable_bytes
        doc: The assignor's data, or null.
      - id: owned_partitions_count
        type: s4
        -derive:
          count-of: owned_partitions
        doc: Number of topics with owned partitions.
      - id: owned_partitions
        type: topic_partitions
        repeat: expr
        repeat-expr: owned_partitions_count
        doc: The partitions the member owns, for cooperative rebalancing.
      - id: generation_id
        type: s4
        doc: The generation the owned partitions belong to, -1 if unknown.
      - id: rack_id
        type: kafka_types::nullable_string
        doc: The consumer's rack, or null.
  assignment:
    doc: A member's assignment, prefixed by its version (versions 0 to 3 share one layout).
    seq:
      - id: version
        type: s2
        doc: Assignment version.
      - id: assigned_partitions_count
        type: s4
        -derive:
          count-of: assigned_partitions
        doc: Number of topics assigned.
      - id: assigned_partitions
        type: topic_partitions
        repeat: expr
        repeat-expr: assigned_partitions_count
        doc: The assigned partitions by topic.
      - id: user_data
        type: kafka_types::nullable_bytes
        doc: The assignor's data, or null.
  topic_partitions:
    doc: A topic and some of its partitions.
    seq:
      - id: topic
        type: kafka_types::string
        doc: The topic.
      - id: partitions_count
        type: s4
        -derive:
          count-of: partitions
        doc: Number of partitions.
      - id: partitions
        type: s4
        repeat: expr
        repeat-expr: partitions_count
        doc: The partitions.
