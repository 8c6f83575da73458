"""Icecast 2: a mount's status page (``status-json.xsl``) and its ICY in-stream metadata."""

from .client import IcecastClient, IcyPolicy

__all__ = ["IcecastClient", "IcyPolicy"]
