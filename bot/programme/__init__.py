"""What a station plays, in time order, and which items are jingles."""
