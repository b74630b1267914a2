"""What the tests and the benchmarks share to drive a real deployment: a signing client and a local EVM node."""
