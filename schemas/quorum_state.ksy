meta:
  id: quorum_state
  title: KRaft quorum state (quorum-state)
  license: Apache-2.0
doc: |
  The election state a KRaft voter keeps in `__cluster_metadata-0/quorum-state`, rewritten (a
  temporary file renamed over it) whenever it votes or learns of a new leader, and read at
  start-up before the log. Its first line is one JSON object: the fields of Kafka's
  QuorumStateData message at a data version, plus `data_version` naming that version.

  Data version 0 (written before Kafka 3.9, and since by voters at kraft.version 0):
  `clusterId` (a string, empty in practice), `leaderId` and `leaderEpoch` (the leader this
  voter knows and its epoch, -1 when none), `votedId` (whom it voted for in that epoch, -1 for
  nobody), `appliedOffset` (0 as Kafka writes it) and `currentVoters` (a list of `{"voterId": n}`, or null).

  Data version 1 (kraft.version 1, Kafka 3.9 onwards): `leaderId`, `leaderEpoch`, `votedId`
  and `votedDirectoryId` (the log directory id of the voter voted for, in Kafka's URL-safe
  base64 without padding); the voter set moved into the log's KRaftVoters control records.

  Kafka refuses a file without `data_version`, or with a version outside 0 and 1. A field
  missing from the object takes its default (-1 for the ids and the epoch).
doc-ref: https://github.com/apache/kafka/blob/trunk/raft/src/main/resources/common/message/QuorumStateData.json
seq:
  - id: state
    type: str
    encoding: UTF-8
    size-eos: true
    doc: |
      The JSON object on the first line (later lines are not read), e.g.
      `{"leaderId":3000,"leaderEpoch":7,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`.
