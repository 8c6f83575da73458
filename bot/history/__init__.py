"""The play history: recorded from every poll, and liked."""
