"""Where Kafka keeps things: the names of its files and directories, the log dirs and partitions found on disk, and its small text files."""
