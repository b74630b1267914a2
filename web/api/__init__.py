"""The signed B2B API: its route table, handlers, bodies, answers and OpenAPI document, and what its handlers share."""
