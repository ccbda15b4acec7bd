"""The subcommands of `kafkacodec`, one module per kind of work."""
