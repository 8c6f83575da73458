"""Foundations every layer may use: background tasks, metrics, text helpers for Discord
markdown, models as JSON. Imports nothing of the bot."""
