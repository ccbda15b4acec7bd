"""Kafka's kafka-dump-log, line for line: the listing of each kind of file, and the decoders of internal topics' records."""
