"""KRaft's `__cluster_metadata`: its records, their reader, snapshots, the metadata image, its replay, and views of it."""
