"""What readers of an order see: the view the order actor writes beside its state in every commit.

Web, dashboard, pages and watchers read these structs (from `orders.view`, or an actor's reply), never the
actor's stored aggregate, so the aggregate and its stored shape can change without them. This package
imports nothing else of the project.
"""
