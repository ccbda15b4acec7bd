"""kafka-dump-log and dump: listings, golden files, internal topics' records."""
