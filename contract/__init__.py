"""The public contract: the shapes merchants' code reads (API answers, webhook payloads), declared as msgspec
structs. Imports nothing of the project, so every layer may depend on it and it on none."""
