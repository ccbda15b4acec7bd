"""The Spark data sources and sink, with and without a session."""
