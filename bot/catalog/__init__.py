"""The stations the bot knows: the registry of clients and a guild adding its own."""
