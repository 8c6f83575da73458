"""Posts OnAir makes on its own schedule, each exactly once: live and offline alerts (driven by
the station watches) and the weekly recap (driven by the clock). Both record a post under a key
naming its event before sending it, and send it under a lease (``outbox.py``)."""
