"""Song requests: shared searches, the request rules, and the credit on air."""
