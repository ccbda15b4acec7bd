"""A segment's batches: the recovery scan, reading across and past damage, record checks, and columnar decoding."""
