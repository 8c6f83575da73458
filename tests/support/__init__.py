"""Shared test helpers: the fake Discord and its rules, the bot environment, storage backends.

Tests import what they use from here explicitly; ``tests/conftest.py`` holds only fixtures.
"""
