"""What changes a log dir, crash-consistently: the lock, the journal, staging and publication, the writer, recovery, retention, compaction and format conversion."""
