"""The codec layer, between the generated code and the log layer: batches and records of every message format, and the records of Kafka's internal topics."""
