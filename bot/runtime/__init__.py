"""The running bot: composition root, discord.py bot, start-up, logs, metrics, tasks."""
