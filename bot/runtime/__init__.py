"""The running bot: the discord.py bot the cogs load into, command sync, start-up, logs. Built
and handed its services by the composition root, ``bot.app``."""
