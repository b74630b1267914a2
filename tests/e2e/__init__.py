"""Browser end-to-end tests of the hosted checkout page and the SDK builds, in Debian's Chromium."""
