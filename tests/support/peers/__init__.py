"""Drivers of other implementations of Kafka's formats, for the cross-checks."""
