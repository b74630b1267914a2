"""The library's version and the API version it speaks (the `/b2b/v1` paths)."""

VERSION = "0.1.0"
API_VERSION = "v1"
