"""Shows outside messages: the voice channel status (or stage topic) and live-show events."""
