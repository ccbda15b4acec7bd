"""The sample log dirs, the same bytes on every run: a broker's and a KRaft controller's."""
