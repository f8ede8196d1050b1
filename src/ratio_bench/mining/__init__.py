"""Mining: (query, marker, gold) tuples and distractor sentences from segmented papers."""
