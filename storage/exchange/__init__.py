"""Batches as JSON Lines, out (`dump --json`) and in (`write`)."""
