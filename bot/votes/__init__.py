"""Song votes: a native Discord poll of songs the station would play on request, ended on
time, its winner requested once for the whole fleet."""
