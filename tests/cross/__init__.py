"""Cross-checks with other implementations: kafka-python, kafkajs, librdkafka, Kaitai Struct's compiler."""
