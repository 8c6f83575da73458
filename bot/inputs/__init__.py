"""What users type into commands, checked and parsed: times, ranges, time zones."""
