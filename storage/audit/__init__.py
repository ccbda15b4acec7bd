"""Answers about a log dir that change nothing: verify, the overview `describe` prints, the positions `find` and `offsets` give, and times as text."""
