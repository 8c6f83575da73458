"""Parts of bench.voice: the bot process of the fake-Discord harness and the engine harness."""
