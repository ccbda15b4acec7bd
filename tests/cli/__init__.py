"""The command line: files it cannot use, questions, progress, write, reindex, the incident flow."""
