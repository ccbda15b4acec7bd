"""Keys and values as typed columns of kafka-log, decoded by the schemas the log dir holds."""
