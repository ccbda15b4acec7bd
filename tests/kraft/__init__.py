"""KRaft metadata: records, the replay, snapshots and the kraft recipe."""
