"""What the batches add up to: producer state, transactions, the latest value of each key, and consumer groups."""
