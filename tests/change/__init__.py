"""The log layer changed: the writer, retention, compaction, recovery, conversion, the journal, and crash consistency."""
