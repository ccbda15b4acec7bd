"""The log layer: Kafka's log directories, segments and indexes on top of the generated codecs."""
