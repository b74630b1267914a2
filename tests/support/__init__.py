"""Helpers the tests share: a signing client and the in-process stack."""
