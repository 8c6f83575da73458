"""Foundations every layer may use: background tasks, metrics, text helpers for Discord
markdown, the URL check every link to Discord passes (``links.py``), models as JSON. Imports
nothing of the bot."""
