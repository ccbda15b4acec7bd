"""Offset, time and transaction indexes, and Kafka's lookups through them."""
