"""The log layer read: files, segments, indexes, producer state, and what a log dir holds."""
