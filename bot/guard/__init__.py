"""Guards on what admins and stations supply: URLs (SSRF), skip patterns, keys at rest."""
