"""Tests of the on-chain layer: adapters against real client libraries and local protocol servers."""
