"""What readers of an order see: the view of the order actor's state, mapped by actors/views.py.

Web, dashboard, pages and watchers read these structs (mapped from `orders.state` by `actors.views.stored_view`,
or from an actor's reply), never the actor's aggregate itself, so the aggregate and its stored shape can change
without them. This package imports nothing else of the project.
"""
